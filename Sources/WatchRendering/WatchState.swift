import BrokerClient
import BrokerProtocol
import TrackingRules

/// What the terminal shows of the trip: the library's ``DonorScreen`` (the one reduction of the broker's frames
/// into a donor's screen, in BrokerClient) and what only a terminal keeps: the event log, the newest fix with the
/// speed it told, the connection's countdown.
///
/// A value type with no I/O: the executable feeds it the ``DonationWatcher``'s events (``apply(_:now:)-event``)
/// and link events; the view model and the plain formatter read it. Times are milliseconds since the Unix epoch,
/// passed in so tests control the clock.
public struct WatchState: Sendable, Equatable {
    /// How many recent positions the map draws as a trail (``DonorViewRules/trailLimit``, shared with the tracking page).
    public static let trailLimit = DonorViewRules.trailLimit
    /// How many log entries are kept.
    public static let logLimit = 100
    /// A fix older than this is marked STALE (``DonorViewRules/staleAfterMilliseconds``, shared with the tracking page).
    public static let staleAfterMilliseconds = DonorViewRules.staleAfterMilliseconds

    /// The newest position and what came with it.
    public struct Fix: Sendable, Equatable {
        public var seq: Int64
        public var position: Position
        /// When the watcher received it.
        public var receivedAt: Int64
        /// The speed this fix tells (reported, or derived from the previous fix), in metres per second.
        public var speed: Double?
    }

    /// What the donor asked to watch.
    public let request: ClientFrame.Target
    /// The donor's screen, as the library computes it from the watcher's events.
    public internal(set) var screen = DonorScreen()
    /// The library's reducer, for frames read by tools and tests that hold frames rather than a watcher's events.
    var tracker = DonationTracker()
    public internal(set) var fix: Fix?
    /// The highest seq seen, sent as `since` when subscribing again.
    public internal(set) var highestSeq: Int64?
    public internal(set) var connection: ConnectionStatus = .connecting
    /// The event log, oldest first, at most ``logLimit`` entries.
    public internal(set) var log: [WatchLogEntry] = []
    /// Why watching ended; once set, events are ignored.
    public internal(set) var ended: WatchEnd?
    /// How many subscriptions were granted: 0 before the first.
    public internal(set) var subscriptions = 0
    /// The `since` of a subscribe sent after a reconnect, until its `subscribed` comes.
    var resubscribeSince: Int64?
    /// Whether the current fix was announced as stale.
    public internal(set) var staleAnnounced = false
    /// The library said positions come again: the next one is logged with the gap.
    var freshPending = false

    public init(request: ClientFrame.Target) {
        self.request = request
    }

    // The trip, as the library's screen state has it.

    /// The volunteer's channel, from `subscribed`.
    public var channel: String? { screen.facts?.channel }
    /// The donation's id, from `subscribed`.
    public var donation: String? { screen.facts?.donation }
    public var donationState: DonationState? { screen.state }
    /// Whether the volunteer's position is shared now (`false` while paused).
    public var tracking: Bool { screen.tracking }
    public var destination: Destination? { screen.destination }
    public var home: Home? { screen.facts?.home }
    public var institution: Institution? { screen.facts?.institution }
    /// Recent positions, oldest first, at most ``trailLimit``; the last one is the fix.
    public var trail: [Position] { screen.trail }
    public var speed: SpeedSmoother { screen.speed }
    /// Whether the volunteer is connected and publishing; `nil` when not told.
    public var online: Bool? { screen.volunteerOnline }
    /// When the broker last heard from the volunteer.
    public var lastSeen: Int64? { screen.volunteerLastSeen }
    /// The current destination once the broker announced the arrival there.
    public var arrived: Destination? { screen.arrived }

    /// Whether the fix is older than ``staleAfterMilliseconds`` at `now`. Not while paused: positions stop then.
    public func isStale(now: Int64) -> Bool {
        guard tracking, let fix else { return false }
        return now - fix.position.timestamp > Self.staleAfterMilliseconds
    }

    /// Appends a log entry, dropping the oldest beyond ``logLimit``.
    mutating func record(_ entry: WatchLogEntry, into update: inout WatchUpdate) {
        log.append(entry)
        if log.count > Self.logLimit { log.removeFirst(log.count - Self.logLimit) }
        update.entries.append(entry)
    }
}

/// What one call to the reducer changed, for displays that print as things happen.
public struct WatchUpdate: Sendable, Equatable {
    /// The log entries it added.
    public var entries: [WatchLogEntry] = []
    /// The seq of the position it took as the new fix, if any.
    public var position: Int64?

    public init(entries: [WatchLogEntry] = [], position: Int64? = nil) {
        self.entries = entries
        self.position = position
    }

    /// Whether nothing changed that a display would show.
    public var isEmpty: Bool { entries.isEmpty && position == nil }
}
