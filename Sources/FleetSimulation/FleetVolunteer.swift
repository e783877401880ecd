import BrokerClient
import BrokerProtocol
import DeterministicRandom
import Foundation

/// One simulated volunteer: takes donations one after another, drives each through its lifecycle with the
/// backend API, and publishes fixes from the phone while a donation is assigned.
///
/// The volunteer never has a publish and a backend update in flight at once: each publish waits for its `ack`
/// before the next update is sent. So every fix the broker keeps was taken inside a trackable window, which
/// is what the donor's ``DeliveryChecker`` holds the broker to.
struct FleetVolunteer: Sendable {
    let index: Int
    let context: FleetContext

    private var configuration: FleetConfiguration { context.configuration }

    /// One donation being carried, and the volunteer's phone.
    private struct Trip {
        var id: String
        var donor: String
        var home: Home
        var institution: Institution
        var lifecycle: DonationLifecycle
        var ended = false
        var stage: DonationTransition.Stage?
    }

    /// The phone: its connection, its place, its clock for the next fix, its chaos schedule.
    private struct Phone {
        var connection: BrokerConnection?
        var location: GeoPoint
        var nextFix: ContinuousClock.Instant = .now
        var nextDrop: ContinuousClock.Instant?
        /// When to connect again, as the library's reconnect rules (``ConnectionStateMachine``) decide.
        var reconnectAt: ContinuousClock.Instant?
        var link: ConnectionStateMachine
        /// The rules said stop: connecting cannot help.
        var gaveUp = false
        var wanted = false
        var counter = 0
    }

    /// Runs rounds until the run stops or the rounds are done.
    func run() async {
        var rng = SeededRandom(seed: configuration.seed).fork(UInt64(index))
        let identity = configuration.volunteerIdentity(index)
        let token: String
        do {
            token = try await context.minter.token(identity: identity, ttlSeconds: context.tokenTTL)
        } catch {
            return context.stats.error("volunteer \(index + 1): cannot mint a token: \(error)")
        }
        var phone = Phone(location: configuration.area.randomPoint(using: &rng), link: Self.link(rng.fork(1)))
        // Volunteers do not all start on the same beat.
        if !(index == 0 && configuration.showcase) { await context.sleep(rng.uniform(0...configuration.realInterval)) }
        defer { context.note(index, nil) }
        var round = 0
        while !context.isStopping, configuration.rounds.map({ round < $0 }) ?? true {
            round += 1
            let showcase = configuration.showcase && index == 0 && round == 1
            let fate = showcase ? DonationFate.delivered : DonationFate.draw(using: &rng)
            let lifecycle = DonationLifecycle.plan(fate: fate, timing: showcase ? .fixed(5) : configuration.timing, using: &rng)
            let homePoint = configuration.area.point(near: phone.location, minimum: 1_500, maximum: 4_000, using: &rng)
            let place = configuration.area.institution(awayFrom: homePoint, minimumDistance: 1_500, using: &rng)
            var trip = Trip(
                id: configuration.donationID(index, round: round), donor: configuration.donorIdentity(index, round: round),
                home: Home(lat: homePoint.lat, lon: homePoint.lon, label: configuration.area.homeLabel(using: &rng)),
                institution: Institution(lat: place.lat, lon: place.lon, name: place.name), lifecycle: lifecycle)
            context.ledger.open(trip.id, home: homePoint, institution: place.point)
            var donor: Task<Void, Never>?
            context.note(index, "carrying \(trip.id)")
            await carry(&trip, phone: &phone, identity: identity, token: token, showcase: showcase, rng: &rng, donor: &donor)
            context.note(index, "hanging up after \(trip.id)")
            await hangUp(&phone)
            context.note(index, "abandoning \(trip.id)")
            if !trip.ended { await abandon(trip) }
            context.note(index, "waiting for the donor of \(trip.id)")
            await donor?.value
            context.note(index, "between donations")
            context.ledger.close(trip.id)
            await context.sleep(configuration.real(rng.uniform(20...90)))
        }
    }

    private func carry(
        _ trip: inout Trip, phone: inout Phone, identity: String, token: String, showcase: Bool, rng: inout SeededRandom,
        donor: inout Task<Void, Never>?
    ) async {
        while let step = trip.lifecycle.next() {
            if context.isStopping { return }
            switch step {
            case .update(let state, let assigned):
                guard await update(&trip, state: state, volunteer: assigned ? identity : nil) else { return }
                phone.wanted = assigned && !state.isTerminal
                if !phone.wanted { await hangUp(&phone) }
                if state == .beingLookedFor && donor == nil {
                    donor = startDonor(trip, showcase: showcase)
                }
            case .wait(let seconds):
                let here = MotionModel.State(point: phone.location, heading: 0, speed: 0, distance: 0)
                await live(for: configuration.real(seconds), trip: trip, phone: &phone, token: token, rng: &rng) { _ in here }
            case .drive(let destination, let fraction):
                let target = destination == .home ? GeoPoint(lat: trip.home.lat, lon: trip.home.lon) : GeoPoint(lat: trip.institution.lat, lon: trip.institution.lon)
                let route = Route.manhattan(
                    from: phone.location, to: target, gridBearing: configuration.area.gridBearing ?? 0, using: &rng)
                let model = MotionModel(route: route, profile: configuration.profile, using: &rng)
                let simulated = model.duration * fraction
                await live(for: configuration.real(simulated), trip: trip, phone: &phone, token: token, rng: &rng) { elapsed in
                    model.truth(at: min(elapsed * configuration.speedup, simulated))
                }
                phone.location = model.truth(at: simulated).point
                if fraction >= 1 && !context.isStopping {
                    // The fix at the destination: the broker announces the arrival to the donor.
                    await publish(trip: trip, phone: &phone, token: token, state: model.truth(at: simulated), rng: &rng)
                    phone.nextFix = .now + .milliseconds(Int64(configuration.realInterval * 1000))
                }
            }
        }
    }

    /// Sends one backend update; `false` when the broker refused it (counted as an error).
    private func update(_ trip: inout Trip, state: DonationState, volunteer: String?) async -> Bool {
        let update = DonationUpdate(donor: trip.donor, volunteer: volunteer, state: state, home: trip.home, institution: trip.institution)
        let wasTrackable = trip.stage?.state.isTrackable ?? false
        if state.isTrackable && !wasTrackable { context.ledger.trackingStarts(trip.id, at: FleetContext.wallClock()) }
        if wasTrackable && !state.isTrackable { context.ledger.trackingEnding(trip.id, at: FleetContext.wallClock()) }
        do {
            try await context.backend.put(trip.id, update)
        } catch {
            context.stats.error("PUT \(trip.id) \(state.rawValue): \(error)")
            return false
        }
        if wasTrackable && !state.isTrackable { context.ledger.trackingEnds(trip.id, at: FleetContext.wallClock()) }
        let dropped = trip.stage?.volunteer != nil && volunteer == nil && state == .created
        let first = trip.stage == nil
        trip.stage = .init(state, volunteer: volunteer)
        context.stats.update { stats in
            if first { stats.created += 1 }
            if dropped { stats.dropped += 1 }
            if state == .delivered { stats.delivered += 1 }
            if state == .cancelled { stats.cancelled += 1 }
        }
        if state.isTerminal { trip.ended = true }
        return true
    }

    /// Deletes a donation the run leaves unfinished, so the broker does not keep it active.
    private func abandon(_ trip: Trip) async {
        guard trip.stage != nil else { return }
        do {
            if trip.stage?.state.isTrackable == true { context.ledger.trackingEnds(trip.id, at: FleetContext.wallClock() + 60_000) }
            try await context.backend.delete(trip.id)
            context.stats.update { $0.deleted += 1 }
        } catch {
            context.stats.error("DELETE \(trip.id): \(error)")
        }
    }

    private func startDonor(_ trip: Trip, showcase: Bool) -> Task<Void, Never> {
        let donor = FleetDonor(
            donation: trip.id, identity: trip.donor, fate: trip.lifecycle.fate, context: context,
            seed: SeededRandom(seed: configuration.seed).fork(UInt64(index) << 20 | UInt64(trip.lifecycle.position)))
        let context = context
        return Task {
            if showcase, let token = try? await context.minter.token(identity: trip.donor, ttlSeconds: context.tokenTTL) {
                let broker = context.configuration.webSocketURL.replacingOccurrences(of: "/v1/ws", with: "")
                context.output.line("Watch a donation live: tracker-watch --broker \(broker) --token \(token) --donation \(trip.id)")
            }
            await donor.run()
        }
    }

    /// Keeps the phone publishing on its cadence for `seconds` of real time; `state` gives the true place after
    /// some real seconds of the phase.
    private func live(
        for seconds: Double, trip: Trip, phone: inout Phone, token: String, rng: inout SeededRandom,
        state: (Double) -> MotionModel.State
    ) async {
        let clock = ContinuousClock()
        let start = clock.now
        let end = start + .milliseconds(Int64(seconds * 1000))
        let interval = Duration.milliseconds(Int64(configuration.realInterval * 1000))
        while !context.isStopping {
            let now = clock.now
            if now >= end { return }
            if phone.wanted {
                await manageConnection(&phone, token: token, rng: &rng)
                if now >= phone.nextFix {
                    let elapsed = Double((now - start).components.seconds) + Double((now - start).components.attoseconds) / 1e18
                    await publish(trip: trip, phone: &phone, token: token, state: state(elapsed), rng: &rng)
                    phone.nextFix = max(phone.nextFix + interval, clock.now)
                }
            }
            let wake = phone.wanted ? min(phone.nextFix, end) : end
            let nap = wake - clock.now
            if nap > .zero { try? await Task.sleep(for: min(nap, .milliseconds(250))) }
        }
    }

    /// The library's reconnect rules for one phone, with the run's seeded randomness for the jitter: a
    /// chaos drop or a failure waits a full-jitter delay (up to 2.5 s, doubling to 15 s), 5 failures before the
    /// first connection stop the volunteer.
    static func link(_ random: SeededRandom) -> ConnectionStateMachine {
        ConnectionStateMachine(
            policy: .init(initialDelay: .milliseconds(2_500), maximumDelay: .seconds(15), attemptsBeforeFirstConnection: 5), random: random)
    }

    /// Connects the phone when it should be, and drops it now and then under `--chaos`.
    private func manageConnection(_ phone: inout Phone, token: String, rng: inout SeededRandom) async {
        let now = ContinuousClock.now
        if configuration.chaos, phone.connection != nil, let drop = phone.nextDrop, now >= drop {
            context.note(index, "dropping its connection (chaos)")
            await hangUp(&phone)
            follow(phone.link.ended(.closed(code: 1000, reason: "chaos"), now: now), phone: &phone, now: now)
            context.stats.update { $0.reconnects += 1 }
        }
        guard phone.connection == nil, !phone.gaveUp, phone.reconnectAt.map({ now >= $0 }) ?? true else { return }
        if case .none = phone.link.delayElapsed() { _ = phone.link.start() }
        context.note(index, "connecting")
        defer { context.note(index, "driving") }
        do {
            let connection = try await BrokerConnection.connect(url: configuration.webSocketURL, token: token)
            phone.link.opened(now: now)
            guard case .welcome(let welcome) = try await connection.next(timeout: .seconds(10)) else {
                context.stats.error("volunteer \(index + 1): the broker did not send welcome")
                await connection.close()
                follow(phone.link.ended(.dead("no welcome"), now: .now), phone: &phone, now: .now)
                return
            }
            phone.link.welcomed(heartbeatSeconds: welcome.heartbeat)
            phone.connection = connection
            phone.reconnectAt = nil
            context.stats.update { $0.volunteersOnline += 1 }
            if configuration.chaos { phone.nextDrop = now + .milliseconds(Int64(rng.uniform(3_000...20_000))) }
        } catch {
            context.stats.error("volunteer \(index + 1) cannot connect: \(error)")
            follow(phone.link.ended(.unreachable("\(error)"), now: now), phone: &phone, now: now)
        }
    }

    /// Does what the reconnect rules say after an ending: wait their delay, or give up.
    private func follow(_ action: ConnectionStateMachine.Action, phone: inout Phone, now: ContinuousClock.Instant) {
        switch action {
        case .wait(let delay, _, _):
            phone.reconnectAt = now + delay
        case .stop(let reason, _):
            phone.gaveUp = true
            context.stats.error("volunteer \(index + 1) gives up connecting: \(reason)")
        case .connect, .closeDead, .none:
            phone.reconnectAt = now
        }
    }

    private func hangUp(_ phone: inout Phone) async {
        guard let connection = phone.connection else { return }
        phone.connection = nil
        await connection.close()
        context.stats.update { $0.volunteersOnline -= 1 }
    }

    /// Tells the ledger when a kept fix is inside the arrival radius of the current destination (with half a
    /// metre to spare, so rounding cannot disagree with the broker).
    private func noteArrival(trip: Trip, fix: Position) {
        guard let destination = trip.stage?.state.destination else { return }
        let place = destination == .home ? GeoPoint(lat: trip.home.lat, lon: trip.home.lon) : GeoPoint(lat: trip.institution.lat, lon: trip.institution.lon)
        if GeoPoint(lat: fix.lat, lon: fix.lon).distance(to: place) <= configuration.arrivalRadius - 0.5 {
            context.ledger.reached(trip.id, destination)
        }
    }

    /// Publishes one fix and waits for its `ack`.
    private func publish(trip: Trip, phone: inout Phone, token: String, state: MotionModel.State, rng: inout SeededRandom) async {
        guard let connection = phone.connection else { return }
        let timestamp = FleetContext.wallClock()
        let fix = MotionModel.fix(of: state, profile: configuration.profile, timestamp: timestamp, using: &rng)
        phone.counter += 1
        let id = "p\(phone.counter)"
        context.ledger.sent(trip.id, timestamp: timestamp, at: .now)
        context.note(index, "publishing on \(trip.id)")
        defer { context.note(index, "driving \(trip.id)") }
        do {
            try await connection.send(.publish(.init(id: id, position: fix)))
            context.stats.update { $0.published += 1 }
            for _ in 0..<8 {
                switch try await connection.next(timeout: .seconds(10)) {
                case .ack(let ack) where ack.re == id:
                    if ack.tracking {
                        context.ledger.kept(trip.id, timestamp: fix.timestamp)
                        context.stats.update { $0.kept += 1 }
                        noteArrival(trip: trip, fix: fix)
                    }
                    return
                case .error(let error) where error.re == id:
                    if error.code == .rateLimited {
                        context.rateLimited(error.message)
                    } else {
                        context.stats.error("volunteer \(index + 1): publish refused: \(error.code.rawValue): \(error.message)")
                    }
                    return
                default:
                    continue
                }
            }
            context.stats.error("volunteer \(index + 1): no ack for publish \(id)")
        } catch {
            // The connection failed under the volunteer: reconnect when the rules say.
            if !configuration.chaos { context.stats.error("volunteer \(index + 1): connection lost: \(error)") }
            phone.connection = nil
            context.stats.update { $0.volunteersOnline -= 1 }
            await connection.close()
            follow(phone.link.ended(.closed(code: nil, reason: "\(error)"), now: .now), phone: &phone, now: .now)
        }
    }
}
