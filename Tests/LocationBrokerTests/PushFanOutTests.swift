import BrokerCore
import BrokerStorage
import EventDelivery
import Foundation
import Logging
import XCTest

@testable import BrokerSQLite
@testable import BrokerTestSupport
@testable import LocationBroker

/// Each browser's retries, on their own: bounded by the push's window, dropped once the donation ended, replaced by a
/// newer push. A real outbox (SQLite); the push services are a stand-in that answers as told and moves the clock.
final class PushFanOutTests: XCTestCase {
    /// Answers each attempt with the verdict its endpoint is told, records it, and moves the clock by `step`.
    // A plain lock: `Synchronization.Mutex` is not used in new code (the package's platform floor).
    private final class PushServices: PushSending, @unchecked Sendable {
        private let lock = NSLock()
        private var log: [(endpoint: String, event: String, at: Int64)] = []
        private var failing: Set<String> = []
        let clock: ManualClock
        let step: Int64

        init(clock: ManualClock, step: Int64) {
            self.clock = clock
            self.step = step
        }

        func fail(_ endpoint: String, _ on: Bool) {
            lock.withLock {
                if on { failing.insert(endpoint) } else { failing.remove(endpoint) }
            }
        }

        var attempts: [(endpoint: String, event: String, at: Int64)] { lock.withLock { log } }

        func send(_ event: OutboxEvent, message: PushMessage, to subscription: PushSubscriptionRecord, now: Int64) async -> AttemptVerdict {
            let failed = lock.withLock {
                log.append((subscription.endpoint, event.id, clock.now))
                return failing.contains(subscription.endpoint)
            }
            clock.advance(by: step)
            return failed ? .retry("503") : .delivered
        }
    }

    private let start: Int64 = 1_800_000_000_000

    private func fixture(step: Int64) throws -> (PushFanOut, PushServices, any EventOutbox, ManualClock) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fan-out-\(UUID().uuidString).sqlite").path
        let outbox = SQLiteEventOutbox(database: try SQLiteDatabase.open(path: path))
        let clock = ManualClock(start: start)
        let services = PushServices(clock: clock, step: step)
        let fanOut = PushFanOut(
            outbox: outbox, pushes: services, retries: PushRetries(),
            schedule: RetrySchedule(baseMilliseconds: 1, capMilliseconds: 2, giveUpAfterMilliseconds: 0), clock: clock.wallClock,
            metrics: BrokerMetrics().events, failures: DeliveryFailureLog(logger: Logger(label: "test"), clock: clock.wallClock),
            logger: Logger(label: "test"))
        return (fanOut, services, outbox, clock)
    }

    private func event(_ id: String, type: String = "tracking.approaching", ttl: Int, at: Int64) -> OutboxEvent {
        OutboxEvent(
            id: id, donation: "d-1", incarnation: "i-1", type: type, occurredAt: at, body: "{}",
            push: PushMessage(title: "t", body: "b", tag: "donation-d-1", urgency: "normal", ttlSeconds: ttl))
    }

    private func subscription(_ endpoint: String) -> PushSubscriptionRecord {
        PushSubscriptionRecord(donation: "d-1", incarnation: "i-1", endpoint: endpoint, p256dh: "k", auth: "a", createdAt: start)
    }

    func testAnETAIsRetriedOnlyWithinItsWindowAndTheOtherBrowserOnce() async throws {
        let (fanOut, services, outbox, _) = try fixture(step: 20_000)
        let good = subscription("https://fcm.googleapis.com/good")
        let bad = subscription("https://fcm.googleapis.com/bad")
        for record in [good, bad] { _ = try await outbox.addSubscription(record, limit: 5) }
        services.fail(bad.endpoint, true)
        let approaching = event("evt_a", ttl: 300, at: start)
        let round = await fanOut.firstRound(approaching, approaching.push!, to: [good, bad], now: start)
        XCTAssertEqual(round.loops.count, 1)
        for key in round.loops { await fanOut.retryLoop(key) }
        let window = PushFanOut.retryWindowMilliseconds(approaching.push!)
        XCTAssertEqual(window, 150_000, "an ETA is worth trying for two and a half minutes")
        XCTAssertEqual(services.attempts.filter { $0.endpoint == good.endpoint }.count, 1, "the working browser is pushed once")
        let retried = services.attempts.filter { $0.endpoint == bad.endpoint }
        XCTAssertGreaterThan(retried.count, 2)
        XCTAssertTrue(retried.allSatisfy { $0.at < start + window }, "an attempt after the window: \(retried.map(\.at))")
    }

    func testARetryIsDroppedOnceTheDonationEnded() async throws {
        let (fanOut, services, outbox, _) = try fixture(step: 1_000)
        let bad = subscription("https://fcm.googleapis.com/bad")
        _ = try await outbox.addSubscription(bad, limit: 5)
        services.fail(bad.endpoint, true)
        let pickedUp = event("evt_p", type: "tracking.resumed", ttl: 3_600, at: start)
        let round = await fanOut.firstRound(pickedUp, pickedUp.push!, to: [bad], now: start)
        // The end: its subscriptions go.
        try await outbox.removeSubscriptions(donation: "d-1")
        for key in round.loops { await fanOut.retryLoop(key) }
        XCTAssertEqual(services.attempts.count, 1, "the pick-up was tried again after the end")
        XCTAssertEqual(fanOut.retries.count, 0)
    }

    func testANewerPushReplacesTheOneWaitingForTheSameBrowser() async throws {
        let (fanOut, services, outbox, _) = try fixture(step: 1_000)
        let bad = subscription("https://fcm.googleapis.com/bad")
        _ = try await outbox.addSubscription(bad, limit: 5)
        services.fail(bad.endpoint, true)
        let pickedUp = event("evt_p", type: "tracking.resumed", ttl: 3_600, at: start)
        let first = await fanOut.firstRound(pickedUp, pickedUp.push!, to: [bad], now: start)
        let ended = event("evt_e", type: "tracking.ended", ttl: 86_400, at: start + 1_000)
        let second = await fanOut.firstRound(ended, ended.push!, to: [bad], now: start + 1_000)
        XCTAssertEqual(first.loops.count, 1)
        XCTAssertEqual(second.loops.count, 0, "one loop per browser")
        try await outbox.removeSubscriptions(donation: "d-1")
        services.fail(bad.endpoint, false)
        for key in first.loops { await fanOut.retryLoop(key) }
        XCTAssertEqual(services.attempts.map(\.event), ["evt_p", "evt_e", "evt_e"], "the end's push, retried to its browser; the pick-up never again")
    }
}
