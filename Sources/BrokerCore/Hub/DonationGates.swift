import BrokerProtocol

/// Brings the channels' donation gates in line with the changes the store made durable, and keeps the index
/// donation id -> volunteer channel that `subscribe` by donation reads.
///
/// Lock order (docs/LOCK-ORDER.md): `revisions` first, then a shard lock, then the leaves; `index` is taken
/// under `revisions` (never under a shard lock) and holds nothing else.
package final class DonationGates: Sendable {
    /// The store revision of each donation change applied, so an older change arriving late is ignored.
    private let revisions = LockedValue(AppliedRevisions())
    /// Donation id -> the volunteer channel it gates.
    private let index = LockedValue<[String: String]>([:])
    private let registry: ChannelRegistry
    private let delivery: Delivery
    private let clock: WallClock
    /// Where every donation's view starts numbering on this node (``ViewCounter``): the clock when the hub started.
    private let viewStart: Int64

    init(registry: ChannelRegistry, delivery: Delivery, clock: WallClock) {
        self.registry = registry
        self.delivery = delivery
        self.clock = clock
        self.viewStart = max(1, clock.now()) * 1000
    }

    /// The volunteer channel that `id` gates, if it is active on this node.
    package func channelName(ofDonation id: String) -> String? {
        index.withLock { $0[id] }
    }

    /// Applies a durable change unless a newer one for the same donation was applied already.
    /// - Returns: whether the change was applied.
    func apply(_ change: DonationChange) -> Bool {
        let now = clock.now()
        return revisions.withLock { revisions in
            guard revisions.isNewer(change.revision, for: change.id) else { return false }
            revisions.record(change.revision, for: change.id, ended: change.new?.state.isTerminal ?? true, now: now)
            // The gate this node holds is the truth about the old state, whatever the sender believed.
            apply(id: change.id, new: change.new, now: now)
            return true
        }
    }

    /// Rebuilds the gates from the store at start.
    func load(_ snapshot: StoreSnapshot) {
        let now = clock.now()
        revisions.withLock { revisions in
            for donation in snapshot.donations where revisions.isNewer(snapshot.revision, for: donation.id) {
                revisions.record(snapshot.revision, for: donation.id, ended: false, now: now)
                apply(id: donation.id, new: donation, now: now)
            }
            revisions.loaded(upTo: snapshot.revision)
        }
    }

    /// Every store revision up to this one is accounted for on this node.
    var completeRevision: Int64 { revisions.withLock { $0.complete } }

    /// Notes that the bus brought `revisions`.
    /// - Returns: whether a revision below the highest of them was never seen: a gap to catch up on.
    func noteSeen(_ seen: [Int64]) -> Bool {
        revisions.withLock { applied in
            for revision in seen { applied.seen(revision) }
            return applied.hasGap(below: seen.max() ?? 0)
        }
    }

    /// Notes that every revision up to `revision` is accounted for.
    func noteAccounted(through revision: Int64) {
        revisions.withLock { $0.accounted(through: revision) }
    }

    /// Forgets the revisions of donations that ended long ago.
    func prune() {
        let now = clock.now()
        revisions.withLock { $0.prune(now: now) }
    }

    /// Brings the gates in line with a change, and tells the subscribers: `state` when a watched donation
    /// pauses or resumes, `unsubscribed` when it ends, changes volunteer or is deleted. Positions kept for a
    /// donation are forgotten the moment it stops being trackable. Runs under `revisions`' lock, so donation
    /// changes never overlap.
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
            registry.locked(oldChannel, create: false) { channel in
                guard let channel else { return }
                channel.donations.removeValue(forKey: id)
                TripEventDetector.forgetLeg(of: id, in: channel, ended: true)
                channel.purgeHistory(of: id)
                revoke(donation: id, in: channel, reason: reason)
            }
        }
        if let new, let newChannel {
            registry.locked(newChannel, create: true) { channel in
                guard let channel else { return }
                var previous = channel.donations[id]
                // The same id for another donation: it was deleted and made again, a change this node may see in
                // one step (a catch-up reads the newest row). Nothing of the old one may reach the new one's
                // watchers, nor the old one's watchers anything of the new.
                if let old = previous, old.donor != new.donor || (old.incarnation != nil && old.incarnation != new.incarnation) {
                    channel.donations.removeValue(forKey: id)
                    channel.purgeHistory(of: id)
                    TripEventDetector.forgetLeg(of: id, in: channel, ended: true)
                    revoke(donation: id, in: channel, reason: .deleted)
                    previous = nil
                }
                var gate = previous ?? DonationGate(new, now: now, viewStart: viewStart)
                gate.move(to: new.state, now: now)
                gate.home = new.home
                gate.institution = new.institution
                gate.incarnation = new.incarnation
                if let previous, !gate.headsForTheSamePlace(as: previous) {
                    gate.arrival = nil
                    TripEventDetector.forgetLeg(of: id, in: channel, ended: false)
                }
                channel.donations[id] = gate
                if previous?.state.isTrackable == true && !new.state.isTrackable {
                    channel.purgeHistory(of: id)
                    purgeQueued(donation: id, in: channel)
                }
                if let previous, previous.state != new.state {
                    delivery.send(.state(.init(channel: newChannel, donation: id, state: new.state)), in: channel, toDonation: id)
                    // Presence was not told while the trip was paused: the resume says where it stands.
                    if !previous.state.isTrackable && new.state.isTrackable {
                        delivery.send(delivery.presence(of: channel), in: channel, toDonation: id)
                    }
                }
            }
        }
        index.withLock { $0[id] = newChannel }
    }

    /// Ends every subscription that `donation` allowed, telling each subscriber why.
    private func revoke(donation: String, in channel: VolunteerChannel, reason: ServerFrame.UnsubscribeReason) {
        guard let revoked = channel.subscribersByDonation[donation], !revoked.isEmpty else { return }
        let frame = delivery.prepare(.unsubscribed(.init(re: nil, channel: channel.name, donation: donation, reason: reason)))
        for (connectionID, connection) in revoked {
            channel.removeSubscriber(connectionID)
            connection.removeSubscription(channel: channel.name)
            // Its positions still waiting, unsent, go too: they may not reach a donor whose donation ended.
            connection.sink.discardQueued(conflationKey: channel.name)
            delivery.push(frame, to: connection)
        }
    }

    /// A donation stopped being trackable while its watchers stay subscribed (a pause): the channel's positions
    /// still waiting in their queues, unsent, are dropped, as the kept ones are. Nothing of the volunteer
    /// reaches a donor once the window has closed, not even a fix taken inside it.
    private func purgeQueued(donation: String, in channel: VolunteerChannel) {
        guard let watchers = channel.subscribersByDonation[donation] else { return }
        for connection in watchers.values {
            connection.sink.discardQueued(conflationKey: channel.name)
        }
    }
}
