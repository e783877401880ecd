/// Whether each volunteer is online, told to the channel's subscribers as it changes: online with a publish
/// (here or on another node), offline with the last connection closed or after the presence timeout.
struct Presence: Sendable {
    let registry: ChannelRegistry
    let delivery: Delivery
    let settings: HubSettings
    let clock: WallClock
    /// Judges silences when the broker tells anyone of trip events.
    let events: TripEventDetector?

    /// Notes that the volunteer was heard from at `now`, under the channel's shard lock; reports it online if
    /// it was not.
    func seen(_ channel: VolunteerChannel, at now: Int64) {
        channel.lastSeen = now
        markOnline(channel)
    }

    /// Reports the volunteer online if it was not. Under the channel's shard lock.
    func markOnline(_ channel: VolunteerChannel) {
        guard !channel.online else { return }
        channel.online = true
        delivery.notifyPresence(channel)
    }

    /// Reports the volunteer offline if it was online. Under the channel's shard lock.
    /// - Returns: whether it was online.
    @discardableResult
    func markOffline(_ channel: VolunteerChannel) -> Bool {
        guard channel.online else { return false }
        channel.online = false
        delivery.notifyPresence(channel)
        return true
    }

    /// Reports offline every volunteer silent for longer than the presence timeout, judges trip silences, and
    /// forgets the channels kept only for their publish rate limit once it has refilled.
    func sweep() {
        let now = clock.now()
        registry.sweep(now: now) { channel in
            if channel.online, let seen = channel.lastSeen, now - seen > settings.presenceTimeoutMilliseconds {
                markOffline(channel)
            }
            events?.sweep(channel, now: now)
        }
    }
}
