import BrokerProtocol

extension Hub {
    /// Applies a durable change unless a newer one for the same donation was applied already: changes arrive
    /// from this node's API and, in a cluster, from the other nodes, in no guaranteed order between the two.
    /// - Returns: whether the change was applied.
    @discardableResult
    func apply(_ change: DonationChange) -> Bool {
        let now = clock()
        return donationRevisions.withLock { revisions in
            guard revisions.isNewer(change.revision, for: change.id) else { return false }
            revisions.record(change.revision, for: change.id, ended: change.new?.state.isTerminal ?? true, now: now)
            // The gate this node holds is the truth about the old state, whatever the sender believed.
            apply(id: change.id, new: change.new, now: now)
            return true
        }
    }

    /// Every store revision up to this one is accounted for on this node; a cluster node catches up on every
    /// change after it.
    var completeRevision: Int64 { donationRevisions.withLock { $0.complete } }

    /// Notes that the bus brought `revisions` (an announced change and the row read for it).
    /// - Returns: whether a revision below the highest of them was never seen: a gap to catch up on.
    func noteSeen(_ revisions: Int64...) -> Bool {
        donationRevisions.withLock { applied in
            for revision in revisions { applied.seen(revision) }
            return applied.hasGap(below: revisions.max() ?? 0)
        }
    }

    /// Notes that every revision up to `revision` is accounted for (after reading every change after
    /// ``completeRevision`` from the store).
    func noteAccounted(through revision: Int64) {
        donationRevisions.withLock { $0.accounted(through: revision) }
    }

    /// Forgets the revisions of donations that ended long ago (run by the sweeper).
    func pruneAppliedRevisions() {
        let now = clock()
        donationRevisions.withLock { $0.prune(now: now) }
    }

    /// Rebuilds the gates from the store at start.
    func load(_ snapshot: StoreSnapshot) {
        let now = clock()
        donationRevisions.withLock { revisions in
            for donation in snapshot.donations where revisions.isNewer(snapshot.revision, for: donation.id) {
                revisions.record(snapshot.revision, for: donation.id, ended: false, now: now)
                apply(id: donation.id, new: donation, now: now)
            }
            revisions.loaded(upTo: snapshot.revision)
        }
    }

    /// Brings the gates in line with a donation change that the store has made durable, and tells the
    /// subscribers: `state` when a watched donation pauses or resumes, `unsubscribed` when it ends, changes
    /// volunteer or is deleted. Positions kept for a donation are forgotten the moment it stops being
    /// trackable.
    ///
    /// Runs under `donationRevisions`' lock, so donation changes never overlap.
    /// - Parameters:
    ///   - new: the donation after the change, `nil` if it was deleted.
    ///   - now: when the change is applied; a donation that becomes trackable opens its window then, so no
    ///     fix taken before that moment can reach its donor.
    private func apply(id: String, new: Donation?, now: Int64) {
        let oldChannel = channelName(ofDonation: id)
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
                var previous = channel.donations[id]
                // The same id for another donation: it was deleted and made again, a change this node may see in
                // one step (a catch-up reads the newest row). Nothing of the old one may reach the new one's
                // watchers, nor the old one's watchers anything of the new.
                if let old = previous, old.donor != new.donor || (old.incarnation != nil && old.incarnation != new.incarnation) {
                    channel.donations.removeValue(forKey: id)
                    channel.purgeHistory(of: id)
                    revoke(donation: id, in: channel, reason: .deleted)
                    previous = nil
                }
                var gate = previous ?? DonationGate(new, now: now)
                gate.move(to: new.state, now: now)
                gate.home = new.home
                gate.institution = new.institution
                gate.incarnation = new.incarnation
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

    /// Ends every subscription that `donation` allowed, telling each subscriber why.
    private func revoke(donation: String, in channel: VolunteerChannel, reason: ServerFrame.UnsubscribeReason) {
        guard let revoked = channel.subscribersByDonation[donation], !revoked.isEmpty else { return }
        let frame = Self.encode(.unsubscribed(.init(re: nil, channel: channel.name, donation: donation, reason: reason)))
        for (connectionID, connection) in revoked {
            channel.removeSubscriber(connectionID)
            connection.removeSubscription(channel: channel.name)
            metrics.record(connection.outbox.push(frame))
        }
    }
}
