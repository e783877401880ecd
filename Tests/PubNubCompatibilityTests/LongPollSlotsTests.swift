import NIOConcurrencyHelpers
import XCTest

@testable import BrokerTestSupport
@testable import PubNubCompatibility

/// Held polls: bounded per identity and in all, and ended by one sweep for all of them instead of a timer each.
final class LongPollSlotsTests: XCTestCase {
    func testASlotIsRefusedPastTheIdentitysLimitAndPastTheTotal() {
        let slots = LongPollSlots(perIdentity: 2, total: 3)
        let later = ContinuousClock.now.advanced(by: .seconds(60))
        let first = slots.take("donor@example.org", waker: PollWaker(), holdEndsAt: later)
        XCTAssertNotNil(first)
        XCTAssertNotNil(slots.take("donor@example.org", waker: PollWaker(), holdEndsAt: later))
        XCTAssertNil(slots.take("donor@example.org", waker: PollWaker(), holdEndsAt: later), "past the identity's limit")
        XCTAssertNotNil(slots.take("other@example.org", waker: PollWaker(), holdEndsAt: later))
        XCTAssertNil(slots.take("third@example.org", waker: PollWaker(), holdEndsAt: later), "past the total")

        slots.release(try! XCTUnwrap(first))
        XCTAssertEqual(slots.count, 2)
        XCTAssertNotNil(slots.take("donor@example.org", waker: PollWaker(), holdEndsAt: later), "a slot given back is free again")
    }

    func testASlotGivenBackTwiceFreesOnlyOnePlace() {
        let slots = LongPollSlots(perIdentity: 1, total: 10)
        let later = ContinuousClock.now.advanced(by: .seconds(60))
        let slot = try! XCTUnwrap(slots.take("donor@example.org", waker: PollWaker(), holdEndsAt: later))
        slots.release(slot)
        slots.release(slot)
        XCTAssertNotNil(slots.take("donor@example.org", waker: PollWaker(), holdEndsAt: later))
        XCTAssertNil(slots.take("donor@example.org", waker: PollWaker(), holdEndsAt: later))
    }

    func testTheSweepWakesThePollsWhoseHoldEndedAndNoOther() async throws {
        let slots = LongPollSlots(perIdentity: 5, total: 10)
        let now = ContinuousClock.now
        let ended = PollWaker()
        let holding = PollWaker()
        _ = slots.take("donor@example.org", waker: ended, holdEndsAt: now.advanced(by: .seconds(1)))
        _ = slots.take("donor@example.org", waker: holding, holdEndsAt: now.advanced(by: .seconds(60)))

        slots.wakeEndedHolds(at: now.advanced(by: .seconds(2)))

        // The ended poll's wait returns at once; the other's does not.
        let endedWait = Task { await ended.wait() }
        let holdingWoken = NIOLockedValueBox(false)
        let holdingWait = Task {
            await holding.wait()
            holdingWoken.withLockedValue { $0 = true }
        }
        try await endedWait.value(waitingFor: "the ended poll is woken", deadline: .now + .seconds(5))
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertFalse(holdingWoken.withLockedValue { $0 }, "a poll still within its hold is not woken")
        holding.wake()
        try await holdingWait.value(waitingFor: "the holding poll is woken", deadline: .now + .seconds(5))
    }
}
