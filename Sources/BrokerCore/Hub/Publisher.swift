import BrokerProtocol

/// A volunteer's publish: the rate limit, presence, admission (for which donations a fix may be kept) and
/// the fan-out, all under the channel's shard lock, so no subscription or donation change can fall between
/// them.
struct Publisher: Sendable {
    let registry: ChannelRegistry
    let keeper: PositionKeeper
    let presence: Presence
    let settings: HubSettings
    let metrics: any HubMetrics
    let clock: WallClock
    let cluster: (any ClusterLink)?
    /// Whether ``cluster`` is set, so that a single node's publish does not copy the existential to learn it.
    let isClustered: Bool

    init(
        registry: ChannelRegistry, keeper: PositionKeeper, presence: Presence, settings: HubSettings, metrics: any HubMetrics, clock: WallClock,
        cluster: (any ClusterLink)?
    ) {
        self.registry = registry
        self.keeper = keeper
        self.presence = presence
        self.settings = settings
        self.metrics = metrics
        self.clock = clock
        self.cluster = cluster
        self.isClustered = cluster != nil
    }

    /// Publishes a validated position on `identity`'s own channel.
    func publish(as identity: String, position: Position) -> Result<Hub.PublishOutcome, BrokerError> {
        publish(on: ChannelRegistry.Key(identity), position: position)
    }

    /// ``publish(as:position:)`` on the channel `key` names, its hash already known (a connection's own channel).
    func publish(on key: ChannelRegistry.Key, position: Position) -> Result<Hub.PublishOutcome, BrokerError> {
        let now = clock.now()
        return registry.locked(key, create: true) { channel -> Result<Hub.PublishOutcome, BrokerError> in
            guard let channel else { return .failure(BrokerError(.internal, "channel unavailable")) }
            guard channel.bucket.take(now: now) else {
                return .failure(BrokerError(.rateLimited, "publishing faster than \(settings.publishRate) positions per second (burst \(settings.publishBurst)); slow down"))
            }
            presence.seen(channel, at: now)
            let trackableNow = channel.trackable
            let admission = Self.admit(position, trackable: trackableNow, now: now, settings: settings)
            guard case .admitted(let trackable) = admission else {
                if case .untracked(let reason) = admission { metrics.untracked(reason) }
                return .success(Hub.PublishOutcome(seq: nil, watchers: 0, untracked: admission.reason))
            }
            let seq = channel.nextSeq
            // Kept for every trackable donation (the usual case): their counters come with the cached ids.
            let counters = trackable == trackableNow.ids ? trackableNow.views : nil
            let watchers = keeper.keep(position, seq: seq, in: channel, for: trackable, counters: counters)
            // Asked before the existential is copied out: a single node would otherwise pay its copy and destroy on
            // every publish.
            if isClustered, let kept = channel.history.last {
                let views = kept.views
                cluster?.announcePosition(
                    channel: channel.name, seq: seq, position: position, donations: views.flatMap(\.donations),
                    viewSeqs: views.flatMap { view in view.donations.map { _ in view.seq } }, seenAt: now)
            }
            return .success(Hub.PublishOutcome(seq: seq, watchers: watchers))
        }
    }

    /// For which donations a fix may be kept: judged by when it was taken, not when it arrived.
    enum Admission: Equatable {
        case admitted([String])
        case untracked(ServerFrame.UntrackedReason)

        var reason: ServerFrame.UntrackedReason? {
            if case .untracked(let reason) = self { reason } else { nil }
        }
    }

    /// Decides for which trackable donations `position` may be kept: those whose current trackable window
    /// opened no later than the fix was taken (give or take the clock tolerance), and none at all when the fix
    /// is older than the maximum age. A fix queued on a phone before BEING-LOOKED-FOR, or taken during a pause
    /// and sent after it, thus reaches nobody.
    static func admit(_ position: Position, trackable: VolunteerChannel.Trackable, now: Int64, settings: HubSettings) -> Admission {
        guard !trackable.ids.isEmpty else { return .untracked(.noTrackableDonation) }
        guard now - position.timestamp <= settings.maxPositionAgeMilliseconds else { return .untracked(.tooOld) }
        let takenAtLatest = position.timestamp + settings.windowToleranceMilliseconds
        // Taken after every window opened: kept for all, with the cached ids (no list built per publish).
        if takenAtLatest >= trackable.latestOpening { return .admitted(trackable.ids) }
        let admitted = trackable.windows.compactMap { takenAtLatest >= $0.since ? $0.id : nil }
        return admitted.isEmpty ? .untracked(.beforeWindow) : .admitted(admitted)
    }
}
