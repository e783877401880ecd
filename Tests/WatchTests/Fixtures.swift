import BrokerProtocol
import WatchRendering

/// Fixed situations around Buenos Aires, built by feeding frames to the reducer, for golden and unit tests.
enum Fixtures {
    /// 2026-11-21T22:00:00Z.
    static let start: Int64 = 1_795_298_400_000
    static let channel = "vol@example.org"
    static let donation = "d-1"
    static let home = Home(lat: -34.6037, lon: -58.3816, label: "Av. Corrientes 1234")
    static let institution = Institution(lat: -34.5875, lon: -58.4206, name: "Caritas Palermo")
    /// Seconds between fixes, as Ponte's app published.
    static let interval: Int64 = 20

    static func subscribed(
        _ state: DonationState, last: ServerFrame.KeptPosition? = nil, online: Bool = true, re: String? = "s1"
    ) -> ServerFrame {
        .subscribed(.init(
            re: re, channel: channel, donation: donation, state: state, tracking: state.isTrackable, destination: state.destination,
            home: home, institution: institution, last: last, online: online))
    }

    static func position(seq: Int64, lat: Double, lon: Double, at: Int64, speed: Double? = 8.3, heading: Double? = nil, accuracy: Double? = 5)
        -> ServerFrame
    {
        .position(.init(
            channel: channel, seq: seq, position: Position(lat: lat, lon: lon, accuracy: accuracy, speed: speed, heading: heading, timestamp: at)))
    }

    static func stateChange(_ state: DonationState) -> ServerFrame {
        .state(.init(channel: channel, donation: donation, state: state))
    }

    /// A point `metres` from `origin` along `bearing`.
    static func point(from origin: (lat: Double, lon: Double), bearing: Double, metres: Double) -> (lat: Double, lon: Double) {
        Geodesy.destination(fromLat: origin.lat, lon: origin.lon, bearing: bearing, distance: metres)
    }

    /// A state after `frames`, each applied `interval` seconds after the one before, starting at ``start``.
    static func state(_ frames: [ServerFrame], request: ClientFrame.Target = .donation(donation)) -> WatchState {
        var state = WatchState(request: request)
        for (index, frame) in frames.enumerated() {
            state.apply(frame, now: start + Int64(index) * 1000)
        }
        return state
    }

    /// The volunteer drives towards the home from 1.6 km south-east, one fix every 20 s, at 30 km/h heading 330°.
    static func drivingHome(fixes: Int = 6, endMetres: Double = 600) -> (frames: [ServerFrame], lastFix: Int64) {
        var frames: [ServerFrame] = [.welcome(.init(identity: "donor@example.org", heartbeat: 30)), subscribed(.beingLookedFor)]
        let step = (1600 - endMetres) / Double(max(1, fixes - 1))
        var at = start
        for index in 0..<fixes {
            let metres = 1600 - Double(index) * step
            let point = point(from: (home.lat, home.lon), bearing: 150, metres: metres)
            at = start + Int64(index) * interval * 1000
            frames.append(position(seq: 101 + Int64(index), lat: point.lat, lon: point.lon, at: at, heading: 330))
        }
        return (frames, at)
    }

    /// Positions applied at their own timestamps (so ages and the log read naturally).
    static func replay(_ frames: [ServerFrame], request: ClientFrame.Target = .donation(donation)) -> WatchState {
        var state = WatchState(request: request)
        var now = start
        for frame in frames {
            if case .position(let update) = frame { now = max(now, update.position.timestamp + 1000) }
            state.apply(frame, now: now)
        }
        return state
    }

    // MARK: The golden situations

    static func waiting() -> (WatchState, Int64) {
        let state = replay([.welcome(.init(identity: "donor@example.org", heartbeat: 30)), subscribed(.beingLookedFor, online: false)])
        return (state, start + 3000)
    }

    static func headingHome() -> (WatchState, Int64) {
        let (frames, last) = drivingHome()
        return (replay(frames), last + 4000)
    }

    static func stale() -> (WatchState, Int64) {
        let (frames, last) = drivingHome()
        var state = replay(frames)
        let now = last + 95_000
        state.tick(now: now)
        return (state, now)
    }

    static func arrived() -> (WatchState, Int64) {
        let (frames, last) = drivingHome(fixes: 8, endMetres: 80)
        var state = replay(frames)
        state.apply(.arrival(.init(channel: channel, donation: donation, place: .home, distance: 80)), now: last + 1000)
        return (state, last + 5000)
    }

    static func paused() -> (WatchState, Int64) {
        let (arrivedState, now) = arrived()
        var state = arrivedState
        state.apply(stateChange(.pickedByVolunteer), now: now + 60_000)
        return (state, now + 65_000)
    }

    /// After the pick-up: from the home towards the institution, at 36 km/h, no reported heading.
    static func headingToInstitution() -> (WatchState, Int64) {
        var (state, now) = paused()
        now += 30_000
        state.apply(stateChange(.beingTakenTo), now: now)
        let bearing = Geodesy.bearing(fromLat: home.lat, lon: home.lon, toLat: institution.lat, lon: institution.lon)
        for index in 0..<5 {
            now += interval * 1000
            let point = point(from: (home.lat, home.lon), bearing: bearing, metres: 150 + Double(index) * 400)
            state.apply(position(seq: 201 + Int64(index), lat: point.lat, lon: point.lon, at: now - 1000, speed: 10, accuracy: 8), now: now)
        }
        return (state, now + 2000)
    }

    static func delivered() -> (WatchState, Int64) {
        var (state, now) = headingToInstitution()
        now += 300_000
        state.apply(.arrival(.init(channel: channel, donation: donation, place: .institution, distance: 40)), now: now)
        now += 120_000
        state.apply(.unsubscribed(.init(re: nil, channel: channel, donation: donation, reason: .delivered)), now: now)
        return (state, now + 1000)
    }

    /// The connection dropped while heading home; the next attempt is in 4 s.
    static func reconnecting() -> (WatchState, Int64) {
        var (state, now) = headingHome()
        state.apply(.lost(reason: "the broker went away (1001)"), now: now)
        state.apply(.retrying(attempt: 3, at: now + 4000, reason: "connection refused"), now: now)
        return (state, now)
    }
}
