import BrokerProtocol

/// What a ``DonationWatcher`` tells the donor's app, in order. A screen that shows each of these is never stuck
/// silent: it is waiting, live, stale, paused, offline, reconnecting, or ended.
public enum DonationEvent: Sendable, Equatable {
    /// The link to the broker changed.
    case connection(ConnectionChange)
    /// The first subscription was granted: what is known of the donation.
    case subscribed(DonationFacts)
    /// Tracking is on but no position has come yet ("Waiting for the volunteer's location…").
    case waitingForFirstPosition
    /// A new position, with a seq above every one yielded before.
    case position(seq: Int64, Position)
    /// Tracking paused (the donation left its trackable state): positions stop until ``resumed(_:destination:)``.
    case paused(DonationState)
    /// Tracking resumed, towards `destination`.
    case resumed(DonationState, destination: Destination?)
    /// The donation changed state without pausing or resuming tracking.
    case state(DonationState, tracking: Bool, destination: Destination?)
    /// The volunteer went online or offline; `lastSeen` is when the broker last heard from them.
    case presence(online: Bool, lastSeen: Int64?)
    /// The volunteer came within the arrival radius of `place`, `distance` metres away.
    case arrival(place: Destination, distance: Double)
    /// No new position for a while although tracking is on: the position shown is old (`lastFix` is its timestamp).
    case stale(lastFix: Int64)
    /// Positions arrive again after ``stale(lastFix:)``.
    case fresh
    /// Watching is over; nothing follows.
    case ended(DonationWatcher.End)
}

/// How the link to the broker changed.
public enum ConnectionChange: Sendable, Equatable {
    /// The first connection is open and subscribed.
    case connected
    /// The connection was lost (or could not be opened); the next attempt is in `delay`.
    case reconnecting(delay: Duration, attempt: Int, reason: String)
    /// Connected and subscribed again, after the positions seen up to `since`.
    case reconnected(since: Int64?)
    /// The device has no network (the app or the library's path monitor said so): no attempts until it is back.
    case offline
}

/// Where a client's link to the broker stands now: the state a screen shows ("Offline, reconnecting in 3 s"), kept
/// from the ``ConnectionChange``s.
public enum LinkState: Sendable, Equatable {
    case connecting
    case connected
    /// Lost; the next attempt is at `at` (milliseconds since the Unix epoch).
    case reconnecting(attempt: Int, at: Int64, reason: String)
    /// The device has no network.
    case noNetwork

    /// The state after `change`, which happened at `now`.
    public static func after(_ change: ConnectionChange, now: Int64) -> LinkState {
        switch change {
        case .connected, .reconnected: .connected
        case .reconnecting(let delay, let attempt, let reason): .reconnecting(attempt: attempt, at: now + delay.milliseconds, reason: reason)
        case .offline: .noNetwork
        }
    }
}

/// What the broker said about the watched donation when the subscription was granted.
public struct DonationFacts: Sendable, Equatable {
    public var donation: String
    public var channel: String
    public var state: DonationState
    public var tracking: Bool
    public var destination: Destination?
    public var home: Home
    public var institution: Institution?
    /// Whether the volunteer is online; `nil` when the broker does not say (while the trip is paused).
    public var online: Bool?

    init(_ subscribed: ServerFrame.Subscribed) {
        donation = subscribed.donation
        channel = subscribed.channel
        state = subscribed.state
        tracking = subscribed.tracking
        destination = subscribed.destination
        home = subscribed.home
        institution = subscribed.institution
        online = subscribed.online
    }
}
