import BrokerProtocol
import Foundation
import TrackingRules

/// What a donor's screen shows, computed once here from a ``DonationWatcher``'s events, so every app (and
/// `tracker-watch`) shows the same thing: the phase in one word, where the volunteer is, how far from where they
/// are heading, and when they should get there.
///
/// A value type with no I/O: ``apply(_:now:)`` takes each event, ``at(_:)`` gives the screen at a moment
/// (staleness depends on the clock). Times are milliseconds since the Unix epoch.
public struct DonorScreen: Sendable, Equatable {
    /// The one thing the donor must know now. A screen is never stuck silent: it is always one of these.
    public enum Phase: Sendable, Equatable {
        /// Not subscribed yet.
        case connecting
        /// Tracking is on and no position has come yet ("Waiting for the volunteer's location…").
        case waiting
        /// Positions arrive.
        case live
        /// Tracking is on but the newest position is older than ``DonorViewRules/staleAfterMilliseconds``.
        case stale
        /// The trip is between its legs (picked up, handed over): positions stop until it resumes.
        case paused
        /// The volunteer's phone went offline while tracking is on: the map shows the last known position.
        case offline
        /// The volunteer is at the place they were heading to.
        case arrived
        /// Watching is over: ``DonorScreen/ended`` says why.
        case ended
    }

    public private(set) var phase: Phase = .connecting
    /// This device's link to the broker.
    public private(set) var link: LinkState = .connecting
    /// What the broker said of the donation: home, institution, channel.
    public private(set) var facts: DonationFacts?
    public private(set) var state: DonationState?
    public private(set) var tracking = false
    /// Where the volunteer is heading; `nil` while paused.
    public private(set) var destination: Destination?
    /// The newest position since tracking last (re)started.
    public private(set) var position: Position?
    /// Recent positions, oldest first, at most ``DonorViewRules/trailLimit``.
    public private(set) var trail: [Position] = []
    /// The smoothed speed the ETA is computed with.
    public private(set) var speed = SpeedSmoother()
    /// Whether the volunteer is online; `nil` when not told (before subscribing, while paused).
    public private(set) var volunteerOnline: Bool?
    public private(set) var volunteerLastSeen: Int64?
    /// The destination the broker announced the volunteer arrived at.
    public private(set) var arrived: Destination?
    /// Metres from the newest position to the destination, while tracking.
    public private(set) var distance: Double?
    /// Seconds to the destination at the smoothed speed; `nil` when unknown, standing still or arrived.
    public private(set) var eta: Double?
    /// How old the newest position is at the moment of ``at(_:)``, in milliseconds.
    public private(set) var age: Int64?
    /// Why watching ended.
    public private(set) var ended: WatchEnd?

    public init() {}

    /// The screen at `now`: the phase and the position's age as of that moment.
    public func at(_ now: Int64) -> DonorScreen {
        var screen = self
        screen.age = position.map { max(0, now - $0.timestamp) }
        screen.phase = screen.phaseNow()
        return screen
    }

    /// Takes one event of the watcher into account, received at `now`.
    public mutating func apply(_ event: DonationEvent, now: Int64) {
        guard ended == nil else { return }
        switch event {
        case .connection(let change):
            link = LinkState.after(change, now: now)
        case .subscribed(let new):
            facts = new
            state = new.state
            tracking = new.tracking
            destination = new.destination
            volunteerOnline = new.online
        case .position(_, let fix):
            if let sample = SpeedSmoother.sample(from: position, to: fix) { speed.add(sample) }
            position = fix
            trail.append(fix)
            if trail.count > DonorViewRules.trailLimit { trail.removeFirst(trail.count - DonorViewRules.trailLimit) }
        case .paused(let new):
            // Presence is kept as last told: a broker stops telling it during a pause, and tells it again on resuming.
            state = new
            tracking = false
            destination = nil
        case .resumed(let new, let to):
            state = new
            tracking = true
            if to != destination { arrived = nil }
            destination = to
            // Positions from before the pause are not news: the next one is.
            position = nil
        case .state(let new, let isTracking, let to):
            state = new
            tracking = isTracking
            if to != destination { arrived = nil }
            destination = to
        case .presence(let online, let lastSeen):
            volunteerOnline = online
            if let lastSeen { volunteerLastSeen = lastSeen }
        case .arrival(let place, _):
            if place == destination { arrived = place }
        case .ended(let end):
            ended = end
            tracking = false
            destination = nil
            switch end {
            case .unsubscribed(.delivered): state = .delivered
            case .unsubscribed(.cancelled): state = .cancelled
            default: break
            }
        case .waitingForFirstPosition, .stale, .fresh:
            // Derived here from the position and the clock.
            break
        }
        measure()
        self = at(now)
    }

    /// Distance and ETA from the newest position to the destination.
    private mutating func measure() {
        guard tracking, let position, let goal = goal() else {
            distance = nil
            eta = nil
            return
        }
        let metres = Geodesy.distance(fromLat: position.lat, lon: position.lon, toLat: goal.lat, lon: goal.lon)
        distance = metres
        eta = arrived == nil ? speed.eta(distance: metres) : nil
    }

    private func goal() -> (lat: Double, lon: Double)? {
        switch destination {
        case .home?: facts.map { ($0.home.lat, $0.home.lon) }
        case .institution?: facts?.institution.map { ($0.lat, $0.lon) }
        case nil: nil
        }
    }

    private func phaseNow() -> Phase {
        if ended != nil { return .ended }
        guard facts != nil else { return .connecting }
        if !tracking { return .paused }
        if let arrived, arrived == destination { return .arrived }
        guard let age else { return .waiting }
        if age > DonorViewRules.staleAfterMilliseconds { return .stale }
        if volunteerOnline == false { return .offline }
        return .live
    }

    /// The wall clock in milliseconds since the Unix epoch.
    public static func wallClock() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
