import BrokerClient
import BrokerProtocol

/// Everything the donor knows about the trip, built from the broker's frames by ``apply(_:now:)``.
///
/// A value type with no I/O: the executable feeds it frames and link events; the view model and the plain
/// formatter read it. Times are milliseconds since the Unix epoch, passed in so tests control the clock.
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
    /// The donor's identity, from `welcome`.
    public internal(set) var identity: String?
    /// The volunteer's channel, from `subscribed`.
    public internal(set) var channel: String?
    /// The donation's id, from `subscribed`.
    public internal(set) var donation: String?
    public internal(set) var donationState: DonationState?
    /// Whether the volunteer's position is shared now (`false` while paused).
    public internal(set) var tracking = false
    public internal(set) var destination: Destination?
    public internal(set) var home: Home?
    public internal(set) var institution: Institution?
    public internal(set) var fix: Fix?
    /// Recent positions, oldest first, at most ``trailLimit``; the last one is the fix.
    public internal(set) var trail: [Position] = []
    public internal(set) var speed = SpeedSmoother()
    /// Whether the volunteer is connected and publishing; `nil` before `subscribed`.
    public internal(set) var online: Bool?
    /// When the broker last heard from the volunteer.
    public internal(set) var lastSeen: Int64?
    /// The current destination once the broker announced the arrival there.
    public internal(set) var arrived: Destination?
    /// The highest seq seen, sent as `since` when subscribing again.
    public internal(set) var highestSeq: Int64?
    public internal(set) var connection: ConnectionStatus = .connecting
    /// The event log, oldest first, at most ``logLimit`` entries.
    public internal(set) var log: [WatchLogEntry] = []
    /// Why watching ended; once set, frames are ignored.
    public internal(set) var ended: WatchEnd?
    /// How many `subscribed` frames came: 0 before the first.
    public internal(set) var subscriptions = 0
    /// The `since` of a subscribe sent after a reconnect, until its `subscribed` comes.
    var resubscribeSince: Int64?
    /// Whether the current fix was already announced as stale.
    public internal(set) var staleAnnounced = false

    public init(request: ClientFrame.Target) {
        self.request = request
    }

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
