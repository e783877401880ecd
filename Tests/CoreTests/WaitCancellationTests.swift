import NIOConcurrencyHelpers
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport

/// The broker's own waits end when their task is cancelled (a shutdown), instead of waiting on something that
/// may never come: a lock whose holder is stuck, a cluster that never joins, connections that never close.
final class WaitCancellationTests: XCTestCase {
    func testAWaiterForABusyLockIsCancelledAndTheLockStillServesTheNext() async throws {
        let lock = AsyncLock()
        let holderMayGo = Latch()
        let holding = Latch()
        let holder = Task {
            try await lock.withLock {
                holding.open()
                await holderMayGo.wait()
            }
        }
        await holding.wait()
        let waiter = Task { try await lock.withLock { "ran" } }
        try await Task.sleep(for: .milliseconds(100))
        waiter.cancel()

        let outcome = try await withDeadline("the cancelled waiter returns", deadline: .now + .seconds(5)) { await waiter.result }
        XCTAssertThrowsError(try outcome.get(), "a cancelled wait throws") { XCTAssertTrue($0 is CancellationError, "\($0)") }

        holderMayGo.open()
        try await holder.value
        let next = try await withDeadline("the next waiter gets the lock", deadline: .now + .seconds(5)) { try? await lock.withLock { "next" } }
        XCTAssertEqual(next, "next", "the cancelled waiter took no turn")
    }

    func testWaitersGetTheLockInTurnWhenNoneIsCancelled() async throws {
        let lock = AsyncLock()
        let order = NIOLockedValueBox<[Int]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask { try await lock.withLock { order.withLockedValue { $0.append(index) } } }
            }
            try await group.waitForAll()
        }
        XCTAssertEqual(order.withLockedValue { $0.count }, 20)
    }

    func testAWaitOnALatchThatNeverOpensEndsWhenCancelled() async throws {
        let latch = Latch()
        let waiting = Task { await latch.wait() }
        try await Task.sleep(for: .milliseconds(100))
        waiting.cancel()

        try await waiting.value(waitingFor: "the cancelled wait returns", deadline: .now + .seconds(5))
        XCTAssertFalse(latch.isOpen)
    }

    func testALatchLetsEveryWaiterThroughWhenItOpens() async throws {
        let latch = Latch()
        let waiters = (0..<5).map { _ in Task { await latch.wait() } }
        try await Task.sleep(for: .milliseconds(50))
        latch.open()
        for waiter in waiters { try await waiter.value(waitingFor: "the open latch lets the waiter through", deadline: .now + .seconds(5)) }
        try await withDeadline("an open latch lets a new wait through", deadline: .now + .seconds(5)) { await latch.wait() }
    }
}
