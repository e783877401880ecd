import BrokerProtocol

extension Hub {
    /// Brings the gates in line with a donation change that the store has made durable, and tells the
    /// subscribers: `state` when a watched donation pauses or resumes, `unsubscribed` when it ends, changes
    /// volunteer or is deleted. Positions kept for a donation are forgotten the moment it stops being
    /// trackable.
    ///
    /// Calls for one donation must not overlap; ``DonationService`` serialises them.
    /// - Parameters:
    ///   - old: the donation before the change, `nil` if it is new.
    ///   - new: the donation after the change, `nil` if it was deleted.
    func apply(old: Donation?, new: Donation?) {
        let id = new?.id ?? old?.id ?? ""
        let oldChannel = old.flatMap { $0.state.isTerminal ? nil : $0.volunteer }
        let newChannel = new.flatMap { $0.state.isTerminal ? nil : $0.volunteer }

        if let oldChannel, oldChannel != newChannel {
            let reason: ServerFrame.UnsubscribeReason =
                switch new?.state {
                case nil: .deleted
                case .delivered: .delivered
                case .cancelled: .cancelled
                default: .volunteerChanged
                }
            locked(oldChannel, create: false) { channel in
                guard let channel else { return }
                channel.donations.removeValue(forKey: id)
                channel.purgeHistory(of: id)
                revoke(donation: id, in: channel, reason: reason)
            }
        }
        if let new, let newChannel {
            locked(newChannel, create: true) { channel in
                guard let channel else { return }
                let previous = channel.donations[id]
                var gate = previous ?? DonationGate(new)
                gate.state = new.state
                gate.home = new.home
                gate.institution = new.institution
                if let previous, !gate.headsForTheSamePlace(as: previous) { gate.arrival = nil }
                channel.donations[id] = gate
                if previous?.state.isTrackable == true && !new.state.isTrackable { channel.purgeHistory(of: id) }
                if let previous, previous.state != new.state {
                    send(.state(.init(channel: newChannel, donation: id, state: new.state)), in: channel, toDonation: id)
                }
            }
        }
        setChannel(newChannel, ofDonation: id)
    }

    /// Rebuilds the gates from the store at start.
    func load(_ donations: [Donation]) {
        for donation in donations { apply(old: nil, new: donation) }
    }

    /// Ends every subscription that `donation` allowed, telling each subscriber why.
    private func revoke(donation: String, in channel: VolunteerChannel, reason: ServerFrame.UnsubscribeReason) {
        let revoked = channel.subscribers.filter { $0.value.donation == donation }
        guard !revoked.isEmpty else { return }
        let frame = Self.encode(.unsubscribed(.init(re: nil, channel: channel.name, donation: donation, reason: reason)))
        for (connectionID, subscriber) in revoked {
            channel.subscribers.removeValue(forKey: connectionID)
            subscriber.connection.removeSubscription(channel: channel.name)
            metrics.record(subscriber.connection.outbox.push(frame))
        }
    }
}
