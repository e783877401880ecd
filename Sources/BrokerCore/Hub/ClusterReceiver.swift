import BrokerProtocol

/// The cluster's receiving side: positions and presence other nodes announced, the last positions the
/// cluster stored, and the subscriptions that waited for this node to listen to a bus shard.
///
/// A position from another node is kept under the sender's seqs (the channel's, and each donation view's) and
/// delivered to this node's donors only for the donations that were trackable on the sender AND are trackable
/// here, judged again by when the fix was taken against this node's own windows.
struct ClusterReceiver: Sendable {
    let registry: ChannelRegistry
    let connections: ConnectionRegistry
    let keeper: PositionKeeper
    let presence: Presence
    let subscriptions: Subscriptions
    let delivery: Delivery
    let settings: HubSettings
    let metrics: any HubMetrics
    let clock: WallClock

    /// A position another node kept. One kept longer ago than ``LastPosition/retentionSeconds`` is not taken in:
    /// a sealed event replayed from the bus long after is as stale as a stored last position that old.
    /// - Parameter viewSeqs: the sender's seqs of the position in each donation's view, in the order of
    ///   `donations`; `nil` (or a list that does not match) to number it here.
    func receivePosition(channel name: String, seq: Int64, position: Position, donations: [String], viewSeqs: [Int64]?, seenAt: Int64) {
        guard clock.now() - seenAt <= Int64(LastPosition.retentionSeconds) * 1000 else { return }
        registry.locked(name, create: false) { channel in
            // No gate for this volunteer here means no trackable donation either: nothing to keep.
            guard let channel else { return }
            channel.lastSeen = max(channel.lastSeen ?? seenAt, seenAt)
            presence.markOnline(channel)
            if let last = channel.history.last, seq <= last.seq { return }
            let numbered = Self.numbered(donations, viewSeqs)
            let tooOld = clock.now() - position.timestamp > settings.maxPositionAgeMilliseconds
            let allowed = tooOld ? [] : numbered.filter {
                channel.admits($0.donation, takenAt: position.timestamp, tolerance: settings.windowToleranceMilliseconds)
            }
            keep(position, seq: seq, in: channel, allowed: allowed, numbered: numbered)
        }
    }

    /// A donation the sender kept a position for, with the seq it gave the position in that donation's view.
    private struct Numbered {
        let donation: String
        let viewSeq: Int64?
    }

    private static func numbered(_ donations: [String], _ viewSeqs: [Int64]?) -> [Numbered] {
        guard let viewSeqs, viewSeqs.count == donations.count else { return donations.map { Numbered(donation: $0, viewSeq: nil) } }
        return zip(donations, viewSeqs).map { Numbered(donation: $0, viewSeq: $1) }
    }

    /// Keeps a position another node kept, for the `allowed` donations, under the sender's numbers. Every view the
    /// sender numbered moves on here too, kept here or not, so that a position this node numbers later never
    /// repeats a number a donor elsewhere already has.
    private func keep(_ position: Position, seq: Int64, in channel: VolunteerChannel, allowed: [Numbered], numbered: [Numbered]) {
        Self.pass(numbered, in: channel)
        guard !allowed.isEmpty else {
            channel.nextSeq = max(channel.nextSeq, seq + 1)
            return
        }
        _ = keeper.keep(position, seq: seq, in: channel, for: allowed.map(\.donation), viewSeqs: Self.viewSeqs(of: allowed))
    }

    /// Moves this node's view counters past the numbers the sender gave.
    private static func pass(_ numbered: [Numbered], in channel: VolunteerChannel) {
        for sent in numbered {
            if let viewSeq = sent.viewSeq, let view = channel.donations[sent.donation]?.view { view.passed(viewSeq) }
        }
    }

    /// The sender's numbers of `allowed`, when it gave one to each.
    private static func viewSeqs(of allowed: [Numbered]) -> [Int64]? {
        allowed.allSatisfy { $0.viewSeq != nil } ? allowed.compactMap(\.viewSeq) : nil
    }

    /// The volunteer's last connection to another node closed. A volunteer still connected here stays online.
    func receiveOffline(channel name: String, lastSeen: Int64?) {
        registry.locked(name, create: false) { channel in
            guard let channel, channel.online, channel.connections == 0 else { return }
            if let lastSeen { channel.lastSeen = max(channel.lastSeen ?? lastSeen, lastSeen) }
            presence.markOffline(channel)
        }
    }

    /// Takes in the stored last positions of a bus shard this node has just started to listen to: each is kept
    /// (and handed to the channel's current subscribers) when it is newer than what this node holds, for the
    /// donations still trackable here whose window it falls in, whatever its age (it is the channel's `last`).
    /// The volunteer counts as online if it was seen within the presence timeout.
    func takeInStored(_ lastPositions: [LastPosition]) {
        let now = clock.now()
        for last in lastPositions {
            registry.locked(last.channel, create: false) { channel in
                guard let channel else { return }
                if let history = channel.history.last, last.seq <= history.seq { return }
                channel.lastSeen = max(channel.lastSeen ?? last.seenAt, last.seenAt)
                if now - last.seenAt <= settings.presenceTimeoutMilliseconds { presence.markOnline(channel) }
                let numbered = Self.numbered(last.donations, last.viewSeqs)
                let allowed = numbered.filter {
                    channel.admits($0.donation, takenAt: last.position.timestamp, tolerance: settings.windowToleranceMilliseconds)
                }
                keep(last.position, seq: last.seq, in: channel, allowed: allowed, numbered: numbered)
            }
        }
    }

    /// Takes in the channels' last positions the cluster stored, at start, after the donations are loaded: a
    /// node started after a position was kept still has it for `last` and `since`, and the volunteer's presence.
    func seed(_ lastPositions: [LastPosition]) {
        let now = clock.now()
        for last in lastPositions {
            registry.locked(last.channel, create: false) { channel in
                guard let channel, channel.history.isEmpty else { return }
                channel.lastSeen = last.seenAt
                channel.online = now - last.seenAt <= settings.presenceTimeoutMilliseconds
                let numbered = Self.numbered(last.donations, last.viewSeqs)
                Self.pass(numbered, in: channel)
                let allowed = numbered.filter { channel.donations[$0.donation]?.state.isTrackable == true }
                channel.nextSeq = max(channel.nextSeq, last.seq + 1)
                guard !allowed.isEmpty else { return }
                keeper.seed(last.position, seq: last.seq, in: channel, for: allowed.map(\.donation), viewSeqs: Self.viewSeqs(of: allowed))
            }
        }
    }

    /// Answers subscriptions that waited for their bus shards: each is checked again now (the donation may have
    /// changed meanwhile) and answered as any subscription is, or refused. One whose connection closed meanwhile
    /// is dropped.
    func completePending(_ pending: [WaitingSubscription]) {
        for waiting in pending {
            let connection = waiting.connection
            guard connections.contains(connection.id) else { continue }
            if let refusal = subscriptions.subscribe(connection, waiting.request) {
                metrics.rejected(refusal.code)
                delivery.reply(.error(.init(re: waiting.request.id, refusal)), to: connection)
            }
            // A connection that closed while it was answered: undo what its disconnect could not see.
            if !connections.contains(connection.id) {
                for name in connection.subscribedChannels {
                    registry.locked(name, create: false) { channel in _ = channel?.removeSubscriber(connection.id) }
                }
            }
        }
    }
}
