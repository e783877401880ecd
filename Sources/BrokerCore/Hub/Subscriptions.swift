import BrokerProtocol

/// Who may watch what: `subscribe` checks the caller's donations (or watch link) and answers with the
/// channel's view, `last` and `since` backlog; `unsubscribe` ends a subscription the client asked to end.
struct Subscriptions: Sendable {
    let registry: ChannelRegistry
    let gates: DonationGates
    let delivery: Delivery
    let settings: HubSettings
    let cluster: (any ClusterLink)?

    /// The refusal for a channel the caller may not watch: the same whatever the reason, so that it reveals
    /// nothing about other people's donations.
    static let channelRefusal = BrokerError(
        .forbidden, "you may not watch this channel: it is not carrying a trackable donation of yours")

    /// The channel an unknown donation id is looked up in: no channel has this name (a name holds no space), so
    /// an unknown id takes the same steps as someone else's, a shard lock and a look-up, and is refused inside.
    static let unknownChannel = "no channel"

    /// The refusal for a donation id the caller may not watch: the same whether it exists or not.
    static func donationRefusal(_ id: String) -> BrokerError {
        BrokerError(.notFound, "no donation \(id) of yours is known to the broker")
    }

    /// Subscribes `connection` if one of its identity's donations allows it. On success the `subscribed`
    /// reply, then any `since` backlog, are queued under the channel's lock, so no live position can slip
    /// between them or be delivered twice.
    /// - Parameter answering: `false` for a held poll, which reads what it may see from the history and only
    ///   needs waking: no reply is built for it.
    /// - Returns: the refusal, or `nil` when subscribed (or waiting for the cluster's bus).
    func subscribe(_ connection: ClientConnection, _ request: ClientFrame.Subscribe, answering: Bool = true) -> BrokerError? {
        // A watch link names its one donation: anything else is refused before anything is looked up.
        if let refusal = connection.watch?.refusal(for: request.target) { return refusal }
        // Checked before anything is looked up, so that the limit reveals nothing about other donations.
        let alreadyWatching: Bool
        switch request.target {
        case .channel(let name): alreadyWatching = connection.donation(for: name) != nil
        case .donation(let id): alreadyWatching = connection.subscribedChannels.contains { connection.donation(for: $0) == id }
        }
        if !alreadyWatching && connection.subscriptionCount >= settings.maxSubscriptionsPerConnection {
            return BrokerError(.limitReached, "a connection may hold at most \(settings.maxSubscriptionsPerConnection) subscriptions; unsubscribe first")
        }
        let channelName: String
        switch request.target {
        case .channel(let name):
            channelName = name
        case .donation(let id):
            channelName = gates.channelName(ofDonation: id) ?? Self.unknownChannel
        }
        return registry.locked(channelName, create: false) { channel -> BrokerError? in
            let gate: DonationGate
            switch request.target {
            case .donation(let id):
                guard let found = channel?.donations[id], connection.watch?.opens(found) ?? (found.donor == connection.identity) else {
                    return Self.donationRefusal(id)
                }
                gate = found
            case .channel:
                // Deterministic when a donor has two donations with one volunteer; `donation` picks one explicitly.
                let mine = (channel?.donations.values.filter { $0.donor == connection.identity } ?? []).sorted { $0.id < $1.id }
                guard let found = mine.first(where: { $0.state.isTrackable }) ?? mine.first else { return Self.channelRefusal }
                gate = found
            }
            guard let channel else { return Self.channelRefusal }
            // A paused trip may be watched: the donor is subscribed, hears nothing until the resume, then everything.
            guard gate.state.isTrackable || gate.state.isPaused else {
                return BrokerError(
                    .notTrackable,
                    "your donation \(gate.id) is \(gate.state.rawValue); it can be watched while BEING-LOOKED-FOR or BEING-TAKEN-TO")
            }
            // In a cluster, answered only once this node listens to the volunteer's bus shard (ClusterReceiver).
            if let cluster,
                !cluster.admitSubscription(.init(connection: connection, request: request, channel: channelName, donation: gate.id))
            {
                return nil
            }
            channel.addSubscriber(Subscriber(connection: connection, donation: gate.id))
            connection.recordSubscription(channel: channelName, donation: gate.id)
            guard answering else { return nil }
            let tracking = gate.state.isTrackable
            // A pause purged this donation's positions; nothing of the volunteer is told while it lasts.
            // Each position under its seq in this donation's view: the donor's numbers count nothing kept for others.
            let allowed = tracking ? channel.history.compactMap { entry in entry.view(for: gate.id).map { (position: entry.position, view: $0) } } : []
            let last = allowed.last.map { ServerFrame.KeptPosition(seq: $0.view.seq, position: $0.position) }
            delivery.reply(
                .subscribed(
                    .init(
                        re: request.id, channel: channelName, donation: gate.id, state: gate.state, tracking: tracking,
                        destination: gate.state.destination, home: gate.home, institution: gate.institution, last: last,
                        online: tracking ? channel.online : nil)),
                to: connection)
            if let since = request.since {
                for (_, view) in allowed where view.seq > since {
                    delivery.push(view.frame, conflationKey: channelName, to: connection)
                }
            }
            // A donor who subscribes after the arrival is told about it too.
            if let arrival = gate.arrival, let place = gate.state.destination {
                delivery.reply(.arrival(.init(channel: channelName, donation: gate.id, place: place, distance: arrival)), to: connection)
            }
            return nil
        }
    }

    /// Ends a subscription the client asked to end.
    /// - Returns: the refusal, or `nil` when unsubscribed (the `unsubscribed` reply is queued).
    func unsubscribe(_ connection: ClientConnection, _ request: ClientFrame.Unsubscribe) -> BrokerError? {
        let channelName: String
        let wantedDonation: String?
        switch request.target {
        case .channel(let name):
            channelName = name
            wantedDonation = nil
        case .donation(let id):
            guard let name = connection.subscribedChannels.first(where: { connection.donation(for: $0) == id }) else {
                if withdrawWaiting(connection, channel: nil, donation: id, re: request.id) { return nil }
                return BrokerError(.notFound, "you are not subscribed to donation \(id)")
            }
            channelName = name
            wantedDonation = id
        }
        return registry.locked(channelName, create: false) { channel -> BrokerError? in
            guard let channel, let subscriber = channel.subscribers[connection.id],
                wantedDonation == nil || subscriber.donation == wantedDonation
            else {
                if withdrawWaiting(connection, channel: channelName, donation: wantedDonation, re: request.id) { return nil }
                return BrokerError(.notFound, "you are not subscribed to \(channelName)")
            }
            channel.removeSubscriber(connection.id)
            connection.removeSubscription(channel: channelName)
            delivery.reply(.unsubscribed(.init(re: request.id, channel: channelName, donation: subscriber.donation, reason: .client)), to: connection)
            return nil
        }
    }

    /// Ends a subscription that still waits for its bus shard, for a client that unsubscribed before its answer:
    /// replies `unsubscribed` after no `subscribed`.
    /// - Returns: whether one waited.
    private func withdrawWaiting(_ connection: ClientConnection, channel: String?, donation: String?, re: String?) -> Bool {
        guard let withdrawn = cluster?.withdrawSubscription(connection: connection.id, channel: channel, donation: donation) else { return false }
        delivery.reply(.unsubscribed(.init(re: re, channel: withdrawn.channel, donation: withdrawn.donation, reason: .client)), to: connection)
        return true
    }
}
