import BrokerClient
import BrokerProtocol
import DeterministicRandom
import Foundation

/// One simulated donor: connects while their donation is trackable, subscribes to it, and checks every frame
/// with a ``DeliveryChecker``. Under `--chaos` the connection drops now and then; the donor reconnects and
/// subscribes again with `since`, and must still see no gap.
struct FleetDonor: Sendable {
    let donation: String
    let identity: String
    let fate: DonationFate
    let context: FleetContext
    let seed: SeededRandom

    private var configuration: FleetConfiguration { context.configuration }

    /// Why the donor's session with the broker ended.
    private enum Outcome {
        case ended, reconnect, failed
    }

    func run() async {
        var rng = seed
        var checker = DeliveryChecker(donation: donation, allowedEnds: Self.allowedEnds(fate), arrivalRadius: configuration.arrivalRadius)
        let token: String
        do {
            token = try await context.minter.token(identity: identity, ttlSeconds: context.tokenTTL)
        } catch {
            return context.stats.error("donor of \(donation): cannot mint a token: \(error)")
        }
        // When to connect again is the library's rule (full-jitter backoff, 5 failures before a first connection
        // give up), the same a phone's DonationWatcher follows.
        var link = ConnectionStateMachine(
            policy: .init(initialDelay: .milliseconds(2_500), maximumDelay: .seconds(15), attemptsBeforeFirstConnection: 5),
            random: rng.fork(1))
        var next = link.start()
        sessions: while !Task.isCancelled {
            switch next {
            case .wait(let delay, _, _):
                try? await Task.sleep(for: delay)
                next = link.delayElapsed()
                continue
            case .stop(let reason, _):
                context.stats.error("donor of \(donation) cannot connect: \(reason)")
                break sessions
            case .connect, .closeDead, .none:
                break
            }
            let connection: BrokerConnection
            do {
                connection = try await BrokerConnection.connect(url: configuration.webSocketURL, token: token)
                link.opened(now: .now)
                guard case .welcome(let welcome) = try await connection.next(timeout: .seconds(10)) else {
                    await connection.close()
                    next = link.ended(.dead("no welcome frame"), now: .now)
                    continue
                }
                link.welcomed(heartbeatSeconds: welcome.heartbeat)
            } catch {
                next = link.ended(.unreachable("\(error)"), now: .now)
                continue
            }
            context.stats.update { $0.donorsOnline += 1 }
            let outcome = await session(connection, checker: &checker, rng: &rng)
            checker.disconnected(at: FleetContext.wallClock())
            await connection.close()
            context.stats.update { $0.donorsOnline -= 1 }
            switch outcome {
            case .ended, .failed:
                break sessions
            case .reconnect:
                context.stats.update { $0.reconnects += 1 }
                next = link.ended(.closed(code: 1000, reason: "chaos"), now: .now)
            }
        }
        let facts = context.ledger.facts(donation)
        checker.finish(windows: facts.windows, kept: facts.kept, reached: facts.reached)
        context.stats.update { $0.lost += checker.lostCount }
        for problem in checker.problems where problem.kind != .lost {
            context.stats.error(problem.description)
        }
        if checker.lostCount > 0, let lost = checker.problems.first(where: { $0.kind == .lost }) {
            context.output.line("LOST: \(lost.description)")
        }
    }

    /// The end reasons that fit the donation's fate (and `deleted`, when the run stops first).
    static func allowedEnds(_ fate: DonationFate) -> Set<ServerFrame.UnsubscribeReason> {
        switch fate {
        case .delivered: [.delivered, .deleted]
        case .cancelledBeforeStart, .cancelledOnTheWay, .cancelledAtHandover: [.cancelled, .deleted]
        case .volunteerDrops: [.volunteerChanged, .deleted]
        }
    }

    /// Subscribes on `connection` and follows the donation until it ends, the connection drops, or chaos drops it.
    private func session(_ connection: BrokerConnection, checker: inout DeliveryChecker, rng: inout SeededRandom) async -> Outcome {
        let since = checker.maxSeq
        var request = 0
        // A paused trip is subscribed to (`tracking: false`) and its resume arrives as a `state` frame. Only a
        // donation that has not started is `not-trackable`: asked again until it starts or ends.
        subscribing: while true {
            request += 1
            let id = "s\(request)"
            do {
                try await connection.send(.subscribe(.init(id: id, target: .donation(donation), since: since)))
                reply: while true {
                    switch try await connection.next(timeout: .seconds(10)) {
                    case .subscribed(let subscribed) where subscribed.re == id:
                        checker.subscribed(subscribed, resumed: since != nil, at: FleetContext.wallClock())
                        break subscribing
                    case .error(let error) where error.re == id:
                        switch error.code {
                        case .notFound:
                            return .ended  // ended, or lost its volunteer, while this donor was away
                        case .notTrackable:
                            if context.isStopping { return .ended }
                            try await Task.sleep(for: .milliseconds(300))
                            continue subscribing
                        default:
                            context.stats.error("donor of \(donation): subscribe refused: \(error.code.rawValue): \(error.message)")
                            return .failed
                        }
                    case .presence:
                        continue reply
                    case let other:
                        context.stats.error("donor of \(donation): unexpected \(other.type) before the subscription")
                        continue reply
                    }
                }
            } catch {
                return dropped(error)
            }
        }
        let dropAt: ContinuousClock.Instant? =
            configuration.chaos ? .now + .milliseconds(Int64(rng.uniform(2_000...15_000))) : nil
        let places = context.ledger.places(donation)
        while true {
            if let dropAt, ContinuousClock.now >= dropAt { return .reconnect }
            guard let event = await connection.nextEvent(timeout: .milliseconds(500)) else {
                if Task.isCancelled { return .failed }
                continue
            }
            // The connection dropped positions this donor left unread too long: connect again and fetch them with
            // `since` (the event just read too, unrecorded), as a donor's app would, instead of counting them lost.
            let unread = connection.droppedPositions
            if unread > 0 {
                context.stats.error("donor of \(donation): fell behind: \(unread) positions dropped unread")
                return .reconnect
            }
            switch event {
            case .frame(let frame, _):
                switch frame {
                case .position(let update):
                    record(update, checker: &checker)
                case .state(let change) where change.donation == donation:
                    checker.state(change)
                case .arrival(let arrival) where arrival.donation == donation:
                    let place = arrival.place == .home ? places?.home : places?.institution
                    checker.arrival(arrival, place: place ?? GeoPoint(lat: 0, lon: 0))
                    context.stats.update { $0.arrivals += 1 }
                case .unsubscribed(let end) where end.donation == donation:
                    checker.unsubscribed(end.reason)
                    return .ended
                case .presence:
                    break
                case .error(let error):
                    context.stats.error("donor of \(donation): error frame \(error.code.rawValue): \(error.message)")
                default:
                    context.stats.error("donor of \(donation): unexpected \(frame.type) frame")
                }
            case .undecodable(let text):
                context.stats.error("donor of \(donation): unreadable frame \(text.prefix(120))")
            case .closed(let code, let reason):
                if code == Int(CloseCode.goingAway) && context.isStopping { return .ended }
                context.stats.error("donor of \(donation): the broker closed the connection (\(code.map(String.init) ?? "no code") \(reason ?? ""))")
                return .reconnect
            }
        }
    }

    private func dropped(_ error: any Error) -> Outcome {
        context.stats.error("donor of \(donation): connection failed: \(error)")
        return .reconnect
    }

    private func record(_ update: ServerFrame.PositionUpdate, checker: inout DeliveryChecker) {
        let before = checker.received
        // Backlog positions after a reconnect waited for the donor: only live ones measure the broker.
        guard checker.position(update) else {
            if checker.received > before { context.stats.update { $0.recovered += 1 } }
            return
        }
        let latency: Int64
        if let sent = context.ledger.sendTime(donation, timestamp: update.position.timestamp) {
            let elapsed = ContinuousClock.now - sent
            latency = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
        } else {
            latency = (FleetContext.wallClock() - update.position.timestamp) * 1000
        }
        context.stats.delivered(latencyMicroseconds: latency)
    }
}
