import BrokerClient
import BrokerProtocol
import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker

/// A volunteer's phone as an app drives it: a real broker (heartbeat 1 s), a `VolunteerPublisher` through a
/// ``FaultProxy`` whose path breaks, the app's network hooks, and a donor of d-1 connected to the broker directly.
final class PublisherReliabilityTests: XCTestCase {
    /// A running publisher through a proxy, what it yielded, and how often it asked for a token.
    final class Phone: Sendable {
        let publisher: VolunteerPublisher
        let proxy: FaultProxy
        /// Boxes of their own, so the token provider and the reading task can hold them before `self` is made.
        private final class Counter: Sendable {
            let value = NIOLockedValueBox(0)
        }

        private final class Log: Sendable {
            let events = NIOLockedValueBox<[VolunteerPublisher.Event]>([])
        }

        private let calls = Counter()
        private let log = Log()
        private let run: Task<Void, Never>
        private let reader: Task<Void, Never>

        init(proxy: FaultProxy, ackTimeout: Duration = .seconds(10)) {
            self.proxy = proxy
            let calls = calls
            let publisher = VolunteerPublisher(url: proxy.webSocketURL, options: .init(policy: ClientFaultTests.policy, ackTimeout: ackTimeout)) {
                calls.value.withLockedValue { $0 += 1 }
                return try await LiveBroker.token("vol@example.org")
            }
            self.publisher = publisher
            let log = log
            let events = publisher.events
            reader = Task { for await event in events { log.events.withLockedValue { $0.append(event) } } }
            run = Task { try? await publisher.run() }
        }

        var events: [VolunteerPublisher.Event] { log.events.withLockedValue { $0 } }

        /// How many times the publisher asked for a token.
        var tokenCalls: Int { calls.value.withLockedValue { $0 } }

        var outcomes: [VolunteerPublisher.FixOutcome] { events.compactMap { if case .fix(let outcome) = $0 { outcome } else { nil } } }

        func wait(for what: String, within limit: Duration = .seconds(15), _ matches: @escaping @Sendable (VolunteerPublisher.Event) -> Bool) async throws {
            try await waitUntil(what, deadline: .now + limit, poll: .milliseconds(20)) { self.events.contains(where: matches) }
        }

        func stop() async throws {
            run.cancel()
            defer { reader.cancel() }
            _ = try await run.value(waitingFor: "the publisher ended once cancelled")
            try await reader.value(waitingFor: "the publisher's events ended")
        }
    }

    /// A broker with d-1 trackable, a phone through a proxy, a donor subscribed directly; everything is stopped
    /// after `body`, whatever happened.
    private func withPhone(ackTimeout: Duration = .seconds(10), _ body: (LiveBroker, Phone, BrokerConnection) async throws -> Void) async throws {
        let live = try await startClientBroker()
        try await live.put("d-1", state: .beingLookedFor)
        let proxy = try await FaultProxy.start(target: live.port)
        addTeardownBlock { await proxy.stop() }
        let phone = Phone(proxy: proxy, ackTimeout: ackTimeout)
        let donor = try await live.connect("donor@example.org")
        do {
            try await donor.send(.subscribe(.init(id: "s1", target: .donation("d-1"))))
            guard case .subscribed = try await donor.next() else { throw BrokerClientError("the donor was not subscribed") }
            try await phone.wait(for: "the publisher connected") { $0 == .connection(.connected) }
            try await body(live, phone, donor)
        } catch {
            XCTFail("\(error); publisher events: \(phone.events)")
        }
        try await phone.stop()
        await donor.close()
        await proxy.stop()
        try await live.stop()
    }

    /// The donor's next position, or `nil` when none comes by `deadline`.
    private func nextPosition(_ donor: BrokerConnection, by deadline: ContinuousClock.Instant) async throws -> Position? {
        while ContinuousClock.now < deadline {
            guard let event = await donor.nextEvent(timeout: deadline - .now) else { return nil }
            if case .frame(.position(let update), _) = event { return update.position }
        }
        return nil
    }

    func testFixesHandedOverWhileThePathIsSilentEndWithTheNewestReachingTheDonorAndNothingOlderAfterIt() async throws {
        try await withPhone(ackTimeout: .milliseconds(1500)) { _, phone, donor in
            let base = WallClock.system.now()
            let first = position(metresFromHome: 1_500, timestamp: base)
            await phone.publisher.publish(first)
            let seen = try await nextPosition(donor, by: .now + .seconds(5))
            XCTAssertEqual(seen?.timestamp, base, "the first fix reached the donor")

            // Mid-trip the path goes silent both ways; the app keeps handing fixes over, into the dead socket.
            phone.proxy.silence()
            let handed = (1...4).map { position(metresFromHome: 1_500 - Double($0) * 100, timestamp: base + Int64($0) * 200) }
            for fix in handed {
                await phone.publisher.publish(fix)
                try await Task.sleep(for: .milliseconds(50))
            }
            let newest = try XCTUnwrap(handed.last)
            let start = ContinuousClock.now
            var after: [Int64] = []
            while let next = try await nextPosition(donor, by: start + .seconds(8)) {
                after.append(next.timestamp)
                if next.timestamp == newest.timestamp { break }
            }
            print("PublisherReliabilityTests: silent path: the newest fix reached the donor \(ContinuousClock.now - start) after the last hand-over")
            XCTAssertEqual(after, [newest.timestamp], "only the newest fix after the reconnect, nothing older")
            try await donor.expectNothingPending()

            try await phone.wait(for: "the newest fix acknowledged") { event in
                if case .fix(let outcome) = event, outcome.position == newest, case .accepted(_?, _) = outcome.result { return true }
                return false
            }
            let outcomes = phone.outcomes
            for older in handed.dropLast() {
                XCTAssertTrue(outcomes.contains(.init(position: older, result: .superseded)), "\(older.timestamp) superseded: \(outcomes)")
            }
            XCTAssertEqual(outcomes.filter { $0.position == newest }.count, 1, "one outcome per fix: \(outcomes)")
            XCTAssertTrue(phone.events.contains(.connection(.reconnected(since: nil))))
        }
    }

    func testAFlappingNetworkMakesFewAttemptsAndOneTokenCallAndAFixAfterItsReturnArrivesWithinASecond() async throws {
        try await withPhone { _, phone, donor in
            let acceptedBefore = phone.proxy.accepted
            let cycles = 5
            var returns: [Duration] = []
            for cycle in 0..<cycles {
                // The network goes: the OS says so, the path is cut, and nothing gets through for 2 s.
                phone.publisher.networkLost()
                phone.proxy.refuse(for: .milliseconds(1900))
                await phone.proxy.reset()
                let offline = phone.proxy.accepted
                try await waitUntil("the publisher says it has no network", deadline: .now + .seconds(2)) { phone.publisher.link == .noNetwork }
                // A little more than 2 s, at a random point of the client's 250 ms tick.
                try await Task.sleep(for: .milliseconds(2_000 + Int64.random(in: 0..<250)))
                XCTAssertEqual(phone.proxy.accepted, offline, "no attempt while offline (cycle \(cycle))")

                // It comes back: a fix taken now must reach the donor within a second plus the round trip.
                phone.publisher.networkAvailable()
                let back = ContinuousClock.now
                let fix = position(metresFromHome: 1_000 - Double(cycle) * 50)
                await phone.publisher.publish(fix)
                var arrived = false
                while !arrived, let next = try await nextPosition(donor, by: back + .seconds(5)) {
                    arrived = next.timestamp == fix.timestamp
                }
                XCTAssertTrue(arrived, "the fix after the network's return reached the donor (cycle \(cycle))")
                XCTAssertEqual(phone.publisher.link, .connected)
                returns.append(ContinuousClock.now - back)
                try await Task.sleep(for: .seconds(1))
            }
            let attempts = phone.proxy.accepted - acceptedBefore
            let tokenCalls = phone.tokenCalls
            print("PublisherReliabilityTests: flapping: \(cycles) cycles of 2 s off, \(attempts) attempts, \(tokenCalls) token calls; fix after return: \(returns)")
            XCTAssertLessThanOrEqual(attempts, cycles + 1, "one attempt per return of the network (one spare)")
            XCTAssertEqual(tokenCalls, 1, "the token, good for an hour, was asked for once")
            for took in returns { XCTAssertLessThan(took, .milliseconds(1500), "a fix after the return within 1 s plus the round trip") }
        }
    }

    func testCoreLocationInvalidValuesAreAcceptedAndReachTheDonorWithoutThem() async throws {
        try await withPhone { _, phone, donor in
            let point = position(metresFromHome: 800)
            let fix = Position(
                latitude: point.lat, longitude: point.lon, horizontalAccuracy: -1, speed: -1, course: -1,
                timestamp: Date(timeIntervalSince1970: Double(point.timestamp) / 1000))
            await phone.publisher.publish(fix)
            let next = try await nextPosition(donor, by: .now + .seconds(5))
            let seen = try XCTUnwrap(next, "no position reached the donor")
            XCTAssertEqual(seen.timestamp, point.timestamp)
            XCTAssertNil(seen.accuracy)
            XCTAssertNil(seen.speed)
            XCTAssertNil(seen.heading)
            try await phone.wait(for: "the fix accepted") { event in
                if case .fix(let outcome) = event, outcome.position == fix, case .accepted(_?, _) = outcome.result { return true }
                return false
            }
        }
    }

    func testTheObservableStatusFollowsThePublisher() async throws {
        try await withPhone { _, phone, _ in
            let status = await MainActor.run { PublisherStatusModel(publisher: phone.publisher) }
            let following = Task { await status.follow() }
            let fix = position(metresFromHome: 900)
            await phone.publisher.publish(fix)
            try await waitUntil("the model shows the fix accepted and who watches") {
                await MainActor.run { status.lastOutcome?.position == fix && status.audience == .init(tracking: true, watchers: 1) }
            }
            let link = await MainActor.run { status.link }
            XCTAssertEqual(link, .connected)
            following.cancel()
            await following.value
        }
    }

    func testASecondRunIsRefused() async throws {
        try await withPhone { _, phone, _ in
            do {
                try await phone.publisher.run()
                XCTFail("a second run() was accepted")
            } catch let error as BrokerClientError {
                XCTAssertEqual(error.kind, .alreadyRunning)
            }
        }
    }
}
