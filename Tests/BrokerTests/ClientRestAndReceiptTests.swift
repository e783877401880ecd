import BrokerProtocol
import Foundation
import XCTest

@testable import BrokerClient
@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker

/// The client library at rest and its per-fix answers, against a real broker on port 0: a connected client with
/// nothing due sleeps (no polling tick), and `publish` hands back each fix's outcome to await.
final class ClientRestAndReceiptTests: XCTestCase {
    /// How long the clients are left idle while their wake-ups are counted. A 250 ms tick would wake 8 times.
    private let rest: Duration = .seconds(2)

    func testAConnectedWatcherAndPublisherWithNothingDueDoNotWakeUp() async throws {
        let live = try await startClientBroker(heartbeatSeconds: 1)
        try await live.put("d-1", state: .beingLookedFor)
        let watcher = DonationWatcher(url: live.webSocketURL, target: .donation("d-1"), options: .init(policy: ClientFaultTests.policy)) {
            try await LiveBroker.token("donor@example.org")
        }
        let publisher = VolunteerPublisher(url: live.webSocketURL, options: .init(policy: ClientFaultTests.policy)) {
            try await LiveBroker.token("vol@example.org")
        }
        let watching = Task { try await watcher.run() }
        let publishing = Task { try await publisher.run() }
        do {
            try await waitUntil("the donor's screen waits for a position") { watcher.screen().phase == .waiting }
            try await waitUntil("the publisher is connected") { publisher.link == .connected }
            let settled = try await withDeadline("the first fix's outcome") {
                await publisher.publish(position(metresFromHome: 900)).outcome
            }
            guard case .accepted(let seq?, let audience)? = settled?.result else { return XCTFail("not accepted: \(String(describing: settled))") }
            XCTAssertGreaterThan(seq, 0)
            XCTAssertTrue(audience.tracking)
            try await waitUntil("the donor's screen is live") { watcher.screen().phase == .live }
            // Nothing is due now but the position's staleness, 60 s away: both sleep, and the keepalive pings (every
            // second here) are the transport's, not the loops'.
            let watcherBefore = watcher.idleWakeUps
            let publisherBefore = publisher.idleWakeUps
            try await Task.sleep(for: rest)
            let watcherWakeUps = watcher.idleWakeUps - watcherBefore
            let publisherWakeUps = publisher.idleWakeUps - publisherBefore
            print("idle wake-ups in \(rest): watcher \(watcherWakeUps), publisher \(publisherWakeUps)")
            XCTAssertEqual(watcherWakeUps, 0, "the watcher woke with nothing due")
            XCTAssertEqual(publisherWakeUps, 0, "the publisher woke with nothing due")
            XCTAssertEqual(publisher.link, .connected)
            XCTAssertEqual(watcher.screen().link, .connected)
        } catch {
            XCTFail("\(error)")
        }
        watching.cancel()
        publishing.cancel()
        _ = try await watching.value(waitingFor: "the watcher ended once cancelled")
        _ = try? await publishing.value
        try await live.stop()
    }

    func testPublishHandsBackEachFixsOutcomeAcceptedRefusedSupersededOrDroppedAfterTheStop() async throws {
        let live = try await startClientBroker()
        try await live.put("d-1", state: .beingLookedFor)
        let publisher = VolunteerPublisher(url: live.webSocketURL, options: .init(policy: ClientFaultTests.policy)) {
            try await LiveBroker.token("vol@example.org")
        }
        let publishing = Task { try await publisher.run() }
        do {
            // Handed over before the connection: waits for it, then is sent and answered.
            let early = await publisher.publish(position(metresFromHome: 1_000))
            let earlyOutcome = try await withDeadline("the outcome of a fix handed over before connecting") { await early.outcome }
            guard case .accepted(let seq?, let audience)? = earlyOutcome?.result else { return XCTFail("not accepted: \(String(describing: earlyOutcome))") }
            XCTAssertGreaterThan(seq, 0)
            XCTAssertEqual(audience, .init(tracking: true, watchers: 0))

            let now = WallClock.system.now()
            let bad = Position(lat: 91, lon: -58.4, timestamp: now + 1)
            let refused = try await withDeadline("the outcome of a fix the broker refuses") { await publisher.publish(bad).outcome }
            guard case .refused(let code, _)? = refused?.result else { return XCTFail("not refused: \(String(describing: refused))") }
            XCTAssertEqual(code, ErrorCode.invalidPosition)

            let older = await publisher.publish(position(metresFromHome: 800, timestamp: now - 1_000))
            XCTAssertEqual(older.settled?.result, .superseded, "not newer than a fix handed over before: settled at once")
        } catch {
            XCTFail("\(error)")
        }
        publishing.cancel()
        _ = try? await publishing.value
        let late = await publisher.publish(position(metresFromHome: 700))
        let lateOutcome = try await withDeadline("the outcome of a fix handed over after the stop") { await late.outcome }
        XCTAssertEqual(lateOutcome?.result, .dropped(reason: "the publisher stopped"), "nothing waits for a connection that will not come")
        try await live.stop()
    }
}
