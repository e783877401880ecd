import BrokerClient
import BrokerProtocol
import TrackingRules
import XCTest

/// The client library reconnects and watches by the numbers the tracking page gets from the broker
/// (``DonorViewRules``): the apps and the page come back after a broker restart by the same rules.
final class DonorViewRulesClientTests: XCTestCase {
    private let t0 = ContinuousClock.now

    func testTheDefaultBackoffIsTheSharedOne() {
        var top = ConnectionStateMachine(policy: .init(), random: FixedRandom(value: .max))
        let first = top.delay(attempt: 1)
        XCTAssertLessThanOrEqual(first, .milliseconds(DonorViewRules.backoffInitialMilliseconds))
        XCTAssertGreaterThan(first, .milliseconds(DonorViewRules.backoffInitialMilliseconds - 1))
        let late = top.delay(attempt: 1_000)
        XCTAssertLessThanOrEqual(late, .milliseconds(DonorViewRules.backoffCapMilliseconds), "capped at the shared cap")
        XCTAssertGreaterThan(late, .milliseconds(DonorViewRules.backoffCapMilliseconds - 1))
    }

    func testTooManyConnectionsWaitTheSharedPatience() {
        var machine = ConnectionStateMachine(policy: .init(), random: FixedRandom(value: 0))
        _ = machine.start()
        machine.opened(now: t0)
        machine.welcomed(heartbeatSeconds: 30)
        guard case .wait(let delay, _, _) = machine.ended(.closed(code: 4029, reason: nil), now: t0) else {
            return XCTFail("4029 is retried")
        }
        XCTAssertEqual(delay, .milliseconds(DonorViewRules.backoffPatienceMilliseconds), "no jitter below the patience")
    }

    func testTheWatchersDefaultsAreTheSharedOnes() {
        let options = DonationWatcher.Options()
        XCTAssertEqual(options.staleAfter, .milliseconds(DonorViewRules.staleAfterMilliseconds))
        XCTAssertEqual(options.subscribeTimeout, .milliseconds(DonorViewRules.subscribeTimeoutMilliseconds))
        XCTAssertEqual(options.notTrackableRetry, .milliseconds(DonorViewRules.notTrackableRetryMilliseconds))
        XCTAssertEqual(DonationTracker().staleAfterMilliseconds, DonorViewRules.staleAfterMilliseconds)
    }
}
