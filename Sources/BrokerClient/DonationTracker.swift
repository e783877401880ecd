import BrokerProtocol
import TrackingRules

/// What a donor's watcher knows of one donation, built from the broker's frames: the highest seq seen (to
/// subscribe again with `since`), whether tracking is on, the age of the last position.
///
/// A value type with no I/O, used by ``DonationWatcher``: every frame becomes the ``DonationEvent``s the app
/// sees. It drops positions seen before, so what it yields is in strictly rising seq order, each seq once.
public struct DonationTracker: Sendable, Equatable {
    /// The highest seq yielded, sent as `since` after a reconnect.
    public private(set) var highestSeq: Int64?
    /// What the last `subscribed` said, updated by later frames.
    public private(set) var facts: DonationFacts?
    /// Why watching ended, once it has.
    public private(set) var ended: DonationWatcher.End?
    /// The timestamp of the newest position yielded since tracking last (re)started.
    public private(set) var lastFix: Int64?
    /// How old the last position may grow, in milliseconds, before it is announced as stale.
    public let staleAfterMilliseconds: Int64
    private var staleAnnounced = false

    public init(staleAfterMilliseconds: Int64 = DonorViewRules.staleAfterMilliseconds) {
        self.staleAfterMilliseconds = staleAfterMilliseconds
    }

    /// Whether positions are shared now.
    public var tracking: Bool { facts?.tracking ?? false }

    /// A subscription was granted; `since` is what the subscribe asked for. The first one yields the donation's
    /// facts; later ones (after a reconnect) yield only what changed while the connection was down.
    public mutating func subscribed(_ subscribed: ServerFrame.Subscribed, since: Int64?) -> [DonationEvent] {
        guard ended == nil else { return [] }
        var events: [DonationEvent] = []
        let new = DonationFacts(subscribed)
        if let old = facts {
            events += change(to: new.state, tracking: new.tracking, destination: new.destination, from: old)
            // While paused the broker does not tell presence (`online` null): nothing to announce.
            if let online = new.online, old.online != online { events.append(.presence(online: online, lastSeen: nil)) }
        } else {
            events.append(.subscribed(new))
        }
        facts = new
        // After `since`, the backlog that follows ends with `last`: taking it now would skip the older ones.
        if let last = subscribed.last, since.map({ last.seq <= $0 }) ?? true {
            events += take(seq: last.seq, position: last.position)
        }
        let expectingBacklog = since != nil && (subscribed.last.map { $0.seq > (since ?? 0) } ?? false)
        if new.tracking, lastFix == nil, !expectingBacklog, !events.contains(where: Self.isWaiting) {
            events.append(.waitingForFirstPosition)
        }
        return events
    }

    /// A subscribe after a reconnect was answered `not-trackable`: the trip is paused.
    public mutating func notTrackable() -> [DonationEvent] {
        guard ended == nil, var facts, facts.tracking else { return [] }
        facts.tracking = false
        facts.destination = nil
        self.facts = facts
        return [.paused(facts.state)]
    }

    /// One frame from the broker (other than `welcome`, `subscribed` and errors, which the watcher handles).
    public mutating func apply(_ frame: ServerFrame) -> [DonationEvent] {
        guard ended == nil else { return [] }
        switch frame {
        case .position(let update) where isOurs(channel: update.channel):
            return take(seq: update.seq, position: update.position)
        case .state(let update) where isOurs(channel: update.channel, donation: update.donation):
            guard var facts else { return [] }
            let events = change(to: update.state, tracking: update.tracking, destination: update.destination, from: facts)
            facts.state = update.state
            facts.tracking = update.tracking
            facts.destination = update.destination
            self.facts = facts
            return events
        case .arrival(let arrival) where isOurs(channel: arrival.channel, donation: arrival.donation):
            return [.arrival(place: arrival.place, distance: arrival.distance)]
        case .presence(let presence) where isOurs(channel: presence.channel):
            facts?.online = presence.online
            return [.presence(online: presence.online, lastSeen: presence.lastSeen)]
        case .unsubscribed(let end) where isOurs(channel: end.channel, donation: end.donation):
            return finish(.unsubscribed(end.reason))
        default:
            return []
        }
    }

    /// When (milliseconds since the epoch) ``tick(now:)`` next has something to announce: the first moment the
    /// newest position counts as stale, while tracking and not announced yet. `nil` when nothing is coming (not
    /// tracking, no position yet, already announced, ended): a watcher need not wake for staleness then.
    public var nextStaleness: Int64? {
        guard ended == nil, tracking, !staleAnnounced, let lastFix else { return nil }
        return lastFix + staleAfterMilliseconds + 1
    }

    /// Time passed (`now` in milliseconds since the epoch): announces once that the last position grew stale.
    public mutating func tick(now: Int64) -> [DonationEvent] {
        guard ended == nil, tracking, !staleAnnounced, let lastFix, now - lastFix > staleAfterMilliseconds else { return [] }
        staleAnnounced = true
        return [.stale(lastFix: lastFix)]
    }

    /// Ends watching; later frames are ignored.
    public mutating func finish(_ end: DonationWatcher.End) -> [DonationEvent] {
        guard ended == nil else { return [] }
        ended = end
        return [.ended(end)]
    }

    // MARK: Helpers

    private mutating func take(seq: Int64, position: Position) -> [DonationEvent] {
        if let highestSeq, seq <= highestSeq { return [] }
        highestSeq = seq
        lastFix = position.timestamp
        var events: [DonationEvent] = []
        if staleAnnounced { events.append(.fresh) }
        staleAnnounced = false
        events.append(.position(seq: seq, position))
        return events
    }

    private mutating func change(to state: DonationState, tracking: Bool, destination: Destination?, from old: DonationFacts) -> [DonationEvent] {
        if old.tracking && !tracking { return [.paused(state)] }
        if !old.tracking && tracking {
            // Positions kept before the pause are forgotten by the broker: the next one is news.
            lastFix = nil
            staleAnnounced = false
            return [.resumed(state, destination: destination), .waitingForFirstPosition]
        }
        if old.state != state || old.destination != destination { return [.state(state, tracking: tracking, destination: destination)] }
        return []
    }

    private func isOurs(channel: String, donation: String? = nil) -> Bool {
        guard let facts else { return false }
        if channel != facts.channel { return false }
        if let donation, donation != facts.donation { return false }
        return true
    }

    private static func isWaiting(_ event: DonationEvent) -> Bool {
        if case .waitingForFirstPosition = event { return true }
        return false
    }
}
