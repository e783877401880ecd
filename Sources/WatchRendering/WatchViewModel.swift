import BrokerClient
import BrokerProtocol
import TrackingRules

/// What the screen shows at one moment: texts, tones and map items derived from a ``WatchState`` and the clock.
public struct WatchViewModel: Sendable, Equatable {
    /// A place on the map.
    public struct Point: Sendable, Equatable {
        public var lat: Double
        public var lon: Double

        public init(lat: Double, lon: Double) {
            self.lat = lat
            self.lon = lon
        }
    }

    /// One line of the event panel.
    public struct EventLine: Sendable, Equatable {
        /// The time of day, `22:00:05`.
        public var time: String
        public var text: String
        public var kind: WatchLogEntry.Kind
    }

    /// How a text should stand out when colour is on.
    public enum Tone: Sendable, Equatable {
        case normal, good, warning
    }

    /// "Donation d-1 · vol@example.org".
    public var title: String
    /// "live", "reconnecting in 3 s (try 2)", ...
    public var connection: String
    public var connectionTone: Tone
    /// The donation's situation in words.
    public var headline: String
    public var headlineTone: Tone
    /// Where the volunteer is heading, `nil` while paused.
    public var destination: String?
    /// The one thing the donor must know now: waiting, paused, stale, offline, reconnecting, ended.
    public var notice: String?
    public var noticeTone: Tone
    public var distance: String
    public var bearing: String
    public var speed: String
    public var eta: String
    public var accuracy: String
    /// "12 s ago", "2 min ago STALE".
    public var lastFix: String
    public var volunteerStatus: String
    public var volunteerTone: Tone
    /// Subscribed, but the trip is between its two legs: positions are not shared now.
    public var paused: Bool
    /// No position yet.
    public var waiting: Bool
    public var stale: Bool
    public var home: Point?
    public var institution: Point?
    public var volunteer: Point?
    /// The volunteer's course in degrees (reported, else from the last two fixes).
    public var heading: Double?
    /// Recent positions, oldest first.
    public var trail: [Point]
    /// The place to highlight on the map.
    public var target: Destination?
    /// The most recent events, oldest first.
    public var events: [EventLine]
    public var ended: WatchEnd?
    /// The raw numbers behind the texts, for plain mode and tests.
    public var distanceMetres: Double?
    public var bearingDegrees: Double?
    public var etaSeconds: Double?
    public var ageSeconds: Int64?

    /// How many events the model keeps for the event panel.
    public static let eventLimit = 20

    /// Derives the view at `now` (milliseconds since the epoch); times of day are shown at `utcOffsetSeconds`.
    public init(state: WatchState, now: Int64, utcOffsetSeconds: Int = 0) {
        let dash = WatchFormat.unknown
        switch state.request {
        case .donation(let id): title = "Donation \(TerminalText.sanitized(state.donation ?? id))"
        case .channel(let channel): title = state.donation.map { "Donation \(TerminalText.sanitized($0))" } ?? "Volunteer \(TerminalText.sanitized(channel))"
        }
        if let channel = state.channel { title += " · \(TerminalText.sanitized(channel))" }
        (connection, connectionTone) = Self.connectionText(state.connection, now: now)

        if let ended = state.ended {
            headline = ended.headline
            headlineTone = ended.isDelivered ? .good : .warning
        } else if case .waitingToResubscribe = state.connection {
            // The broker said "not trackable" after a reconnect: the state it is in now is not known here.
            headline = "Tracking paused"
            headlineTone = .normal
        } else {
            headline = DonationWords.status(state.donationState, tracking: state.tracking, arrived: state.arrived)
            headlineTone = state.arrived != nil ? .good : .normal
        }
        destination = state.destination.map { DonationWords.place($0, home: state.home, institution: state.institution) }

        let fix = state.fix
        paused = state.subscriptions > 0 && !state.tracking && state.ended == nil
        waiting = fix == nil
        stale = state.isStale(now: now)
        home = state.home.map { Point(lat: $0.lat, lon: $0.lon) }
        institution = state.institution.map { Point(lat: $0.lat, lon: $0.lon) }
        volunteer = fix.map { Point(lat: $0.position.lat, lon: $0.position.lon) }
        trail = state.trail.map { Point(lat: $0.lat, lon: $0.lon) }
        heading = Self.heading(state.trail)
        target = state.ended == nil ? state.destination : nil

        let goal: Point? =
            switch state.destination {
            case .home?: home
            case .institution?: institution
            case nil: nil
            }
        // Distance and ETA are the library's (DonorScreen); the bearing is only drawn here.
        if let fix, let goal, state.tracking {
            distanceMetres = state.screen.distance
            bearingDegrees = Geodesy.bearing(fromLat: fix.position.lat, lon: fix.position.lon, toLat: goal.lat, lon: goal.lon)
            etaSeconds = state.screen.eta
        }
        distance = distanceMetres.map(WatchFormat.distance) ?? dash
        bearing = bearingDegrees.map(WatchFormat.bearing) ?? dash
        if state.arrived != nil && state.arrived == state.destination {
            eta = "arrived"
        } else {
            eta = etaSeconds.map(WatchFormat.eta) ?? dash
        }
        speed = fix?.speed.map(WatchFormat.speed) ?? dash
        accuracy = fix?.position.accuracy.map(WatchFormat.accuracy) ?? dash
        if let fix {
            let age = max(0, (now - fix.position.timestamp) / 1000)
            ageSeconds = age
            lastFix = "\(WatchFormat.age(age)) ago" + (stale ? " STALE" : "")
        } else {
            lastFix = dash
        }
        switch state.online {
        case true?:
            volunteerStatus = "online"
            volunteerTone = .good
        case false?:
            volunteerStatus = state.lastSeen.map { "offline, seen \(WatchFormat.age(max(0, now - $0) / 1000)) ago" } ?? "offline"
            volunteerTone = .warning
        case nil:
            volunteerStatus = dash
            volunteerTone = .normal
        }

        (notice, noticeTone) = Self.notice(state, fix: fix, stale: stale, now: now)
        events = state.log.suffix(Self.eventLimit).map {
            EventLine(time: WatchFormat.clock($0.at, utcOffsetSeconds: utcOffsetSeconds), text: $0.text, kind: $0.kind)
        }
        ended = state.ended
    }

    private static func connectionText(_ status: ConnectionStatus, now: Int64) -> (String, Tone) {
        func seconds(until at: Int64) -> Int64 { max(0, (at - now + 999) / 1000) }
        switch status {
        case .connecting: return ("connecting…", .warning)
        case .subscribing: return ("subscribing…", .warning)
        case .live: return ("live", .good)
        case .retrying(let attempt, let at, _): return ("reconnecting in \(seconds(until: at)) s (try \(attempt))", .warning)
        case .waitingToResubscribe(let at): return ("paused, asking again in \(seconds(until: at)) s", .normal)
        case .noNetwork: return ("no network", .warning)
        case .closed: return ("ended", .normal)
        }
    }

    private static func notice(_ state: WatchState, fix: WatchState.Fix?, stale: Bool, now: Int64) -> (String?, Tone) {
        if let ended = state.ended {
            let name = state.institution?.name.map(TerminalText.sanitized).flatMap { $0.isEmpty ? nil : $0 }
            return (TerminalText.sanitized(ended.summary(institution: name)), ended.isDelivered ? .good : .warning)
        }
        if case .retrying(_, _, let reason) = state.connection {
            return ("No connection: \(reason). Reconnecting…", .warning)
        }
        guard state.subscriptions > 0 else { return (nil, .normal) }
        if !state.tracking { return ("Location sharing is paused until the trip goes on.", .normal) }
        guard let fix else { return ("Waiting for the volunteer's location…", .warning) }
        if stale {
            let age = WatchFormat.age(max(0, now - fix.position.timestamp) / 1000)
            return ("No new location for \(age): the position shown is STALE.", .warning)
        }
        if state.online == false { return ("The volunteer is offline; the map shows the last known position.", .warning) }
        return (nil, .normal)
    }

    /// The reported heading of the newest fix, else the bearing from the fix before it when they are
    /// ``DonorViewRules/minimumCourseDistance`` or more apart.
    private static func heading(_ trail: [Position]) -> Double? {
        guard let last = trail.last else { return nil }
        if let heading = last.heading, heading.isFinite { return heading }
        guard trail.count >= 2 else { return nil }
        let previous = trail[trail.count - 2]
        guard Geodesy.distance(fromLat: previous.lat, lon: previous.lon, toLat: last.lat, lon: last.lon) >= DonorViewRules.minimumCourseDistance else {
            return nil
        }
        return Geodesy.bearing(fromLat: previous.lat, lon: previous.lon, toLat: last.lat, lon: last.lon)
    }
}
