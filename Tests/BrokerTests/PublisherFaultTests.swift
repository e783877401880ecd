import BrokerClient
import BrokerProtocol
import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker

/// The volunteer's side of the client library under faults: a real broker (heartbeat 1 s), a `VolunteerPublisher`
/// and a donor of d-1 connected to the broker directly, so only the publisher's path breaks.
final class PublisherFaultTests: XCTestCase {
    /// A running publisher and what it yielded, read by the test while it runs.
    final class PublisherRun: Sendable {
        let publisher: VolunteerPublisher
        /// The events, in a box of their own so the reading task can hold it before `self` is made.
        private final class Log: Sendable {
            let events = NIOLockedValueBox<[VolunteerPublisher.Event]>([])
        }

        private let log = Log()
        private let run: Task<Void, Never>
        private let reader: Task<Void, Never>

        init(url: String, token: @escaping @Sendable () async throws -> String) {
            let publisher = VolunteerPublisher(url: url, options: .init(policy: ClientFaultTests.policy), token: token)
            self.publisher = publisher
            run = Task { try? await publisher.run() }
            let log = log
            reader = Task { for await event in publisher.events { log.events.withLockedValue { $0.append(event) } } }
        }

        var events: [VolunteerPublisher.Event] { log.events.withLockedValue { $0 } }

        /// Waits until the publisher yielded an event that matches.
        func wait(for what: String, _ matches: @escaping @Sendable (VolunteerPublisher.Event) -> Bool) async throws {
            try await waitUntil(what) { self.events.contains(where: matches) }
        }

        /// Cancels the publisher; fails if it does not end.
        func stop() async throws {
            run.cancel()
            defer { reader.cancel() }
            _ = try await run.value(waitingFor: "the publisher ended once cancelled")
            try await reader.value(waitingFor: "the publisher's events ended")
        }
    }

    /// A broker with d-1 trackable, a publisher through `url` (the broker's, or a proxy's), a donor of d-1
    /// subscribed directly; `body` runs once the publisher is connected, and everything is stopped after it.
    private func withPublisher(
        url: ((LiveBroker) async throws -> String)? = nil, token: @escaping @Sendable () async throws -> String,
        _ body: (LiveBroker, PublisherRun, BrokerConnection) async throws -> Void
    ) async throws {
        let live = try await startClientBroker()
        try await live.put("d-1", state: .beingLookedFor)
        let run = PublisherRun(url: try await url?(live) ?? live.webSocketURL, token: token)
        let donor = try await live.connect("donor@example.org")
        do {
            try await donor.send(.subscribe(.init(id: "s1", target: .donation("d-1"))))
            guard case .subscribed = try await donor.next() else { throw BrokerClientError("not subscribed") }
            try await run.wait(for: "the publisher connected") { $0 == .connection(.connected) }
            try await body(live, run, donor)
        } catch {
            XCTFail("\(error); publisher events: \(run.events)")
        }
        try await run.stop()
        await donor.close()
        try await live.stop()
    }

    func testAnExpiredTokenIsRenewedAndThePublisherGoesOn() async throws {
        let calls = NIOLockedValueBox(0)
        // The first token expires 2 s after connecting (30 s leeway); the next ones are good for an hour.
        try await withPublisher(token: {
            let call = calls.withLockedValue { $0 += 1; return $0 }
            return try await LiveBroker.token("vol@example.org", ttl: call == 1 ? -28 : 3600)
        }) { _, run, donor in
            let publisher = run.publisher
            await publisher.publish(position(metresFromHome: 1_400))
            try await waitUntil("an audience of one") { publisher.audience == .init(tracking: true, watchers: 1) }
            try await run.wait(for: "the token expired and was renewed") { $0 == .connection(.reconnected(since: nil)) }
            XCTAssertGreaterThanOrEqual(calls.withLockedValue { $0 }, 2, "a fresh token was asked for")
            let timestamp = WallClock.system.now()
            await publisher.publish(position(metresFromHome: 1_300, timestamp: timestamp))
            let deadline = ContinuousClock.now + .seconds(5)
            var seen = false
            while !seen, ContinuousClock.now < deadline {
                if case .position(let update) = try await donor.next(timeout: .seconds(5)), update.position.timestamp == timestamp { seen = true }
            }
            XCTAssertTrue(seen, "the fix published after the renewal reached the donor")
        }
    }

    func testWhileDisconnectedOnlyTheNewestFixIsSentOnReconnecting() async throws {
        let proxy = NIOLockedValueBox<FaultProxy?>(nil)
        try await withPublisher(
            url: { live in
                let started = try await FaultProxy.start(target: live.port)
                self.addTeardownBlock { await started.stop() }
                proxy.withLockedValue { $0 = started }
                return started.webSocketURL
            },
            token: { try await LiveBroker.token("vol@example.org") }
        ) { _, run, donor in
            let proxy = try XCTUnwrap(proxy.withLockedValue { $0 })
            proxy.refuse(for: .seconds(2))
            await proxy.reset()
            try await run.wait(for: "the publisher noticed") { if case .connection(.reconnecting) = $0 { true } else { false } }
            let base = WallClock.system.now()
            for step in 0..<3 { await run.publisher.publish(position(metresFromHome: 1_200 - Double(step) * 100, timestamp: base + Int64(step) * 10)) }
            var timestamps: [Int64] = []
            let deadline = ContinuousClock.now + .seconds(8)
            while timestamps.isEmpty, ContinuousClock.now < deadline {
                if case .position(let update) = try await donor.next(timeout: .seconds(8)) { timestamps.append(update.position.timestamp) }
            }
            XCTAssertEqual(timestamps, [base + 20], "only the newest fix, once connected again")
            try await donor.expectNothingPending()
        }
    }
}
