import BrokerProtocol
import NIOCore
import XCTest

@testable import BrokerCore

/// The outbox's policy on its own, with instants moved by hand: a slow donor slows nobody, and its queue never
/// grows past its bound.
final class OutboxQueueTests: XCTestCase {
    private let start = ContinuousClock.now

    private func frame(_ text: String) -> PreparedFrame {
        Framing.plain.prepare(Array(text.utf8))
    }

    private func texts(_ taken: OutboxQueue.Taken) -> [String] {
        taken.entries.map { String(buffer: $0.frame.payload) }
    }

    func testFramesThatFitAreQueuedInOrderAndCountAgainstTheLimit() {
        var queue = OutboxQueue(limit: 10, stallLimit: .seconds(10))
        XCTAssertEqual(queue.enqueue(frame("aaaa"), conflationKey: nil, now: start), .queued)
        XCTAssertEqual(queue.enqueue(frame("bbbb"), conflationKey: "vol", now: start), .queued)
        XCTAssertEqual(queue.bytes, 8)
        let taken = queue.take()
        XCTAssertEqual(texts(taken), ["aaaa", "bbbb"])
        XCTAssertNil(taken.close)
        XCTAssertEqual(queue.bytes, 0, "taking empties the queue")
    }

    func testAFullQueueReplacesTheChannelsQueuedPositionInPlace() {
        var queue = OutboxQueue(limit: 12, stallLimit: .seconds(10))
        XCTAssertEqual(queue.enqueue(frame("p1-a"), conflationKey: "vol-a", now: start), .queued)
        XCTAssertEqual(queue.enqueue(frame("p1-b"), conflationKey: "vol-b", now: start), .queued)
        XCTAssertEqual(queue.enqueue(frame("info"), conflationKey: nil, now: start), .queued)
        // Full: the newer position of channel a takes the place of the older one; b's is left alone.
        XCTAssertEqual(queue.enqueue(frame("p2-a"), conflationKey: "vol-a", now: start), .conflated)
        XCTAssertEqual(queue.bytes, 12)
        XCTAssertEqual(texts(queue.take()), ["p2-a", "p1-b", "info"])
    }

    func testAFrameThatFitsNowhereClosesWith4008InsteadOfEverythingQueued() {
        var queue = OutboxQueue(limit: 8, stallLimit: .seconds(10))
        XCTAssertEqual(queue.enqueue(frame("info"), conflationKey: nil, now: start), .queued)
        XCTAssertEqual(queue.enqueue(frame("more"), conflationKey: nil, now: start), .queued)
        // A frame that may not replace anything, in a full queue: the consumer is too slow.
        XCTAssertEqual(queue.enqueue(frame("late"), conflationKey: nil, now: start), .overflowed)
        XCTAssertTrue(queue.isClosing)
        let taken = queue.take()
        XCTAssertEqual(texts(taken), [], "what was queued is dropped")
        XCTAssertEqual(taken.close, OutboxQueue.Close(code: CloseCode.slowConsumer, reason: "slow consumer: outbound queue full"))
        XCTAssertTrue(queue.isFinished)
    }

    func testAPositionBiggerThanTheOneItWouldReplaceClosesWith4008() {
        var queue = OutboxQueue(limit: 8, stallLimit: .seconds(10))
        XCTAssertEqual(queue.enqueue(frame("p1"), conflationKey: "vol", now: start), .queued)
        XCTAssertEqual(queue.enqueue(frame("info00"), conflationKey: nil, now: start), .queued)
        XCTAssertEqual(queue.enqueue(frame("p2-longer"), conflationKey: "vol", now: start), .overflowed)
    }

    func testFramesWaitingLongerThanTheStallLimitCloseWith4008() {
        var queue = OutboxQueue(limit: 1_000, stallLimit: .seconds(10))
        XCTAssertEqual(queue.enqueue(frame("one"), conflationKey: nil, now: start), .queued)
        // The stall clock starts with the first frame that finds another waiting.
        XCTAssertEqual(queue.enqueue(frame("two"), conflationKey: nil, now: start + .seconds(1)), .queued)
        XCTAssertEqual(queue.enqueue(frame("three"), conflationKey: nil, now: start + .seconds(11)), .queued, "exactly the limit is not yet a stall")
        XCTAssertEqual(queue.enqueue(frame("four"), conflationKey: nil, now: start + .milliseconds(11_001)), .overflowed)
        XCTAssertEqual(queue.take().close?.code, CloseCode.slowConsumer)
    }

    func testAConsumerThatTakesKeepsTheStallClockAtZero() {
        var queue = OutboxQueue(limit: 1_000, stallLimit: .seconds(10))
        var now = start
        for _ in 0..<30 {
            XCTAssertEqual(queue.enqueue(frame("a"), conflationKey: nil, now: now), .queued)
            XCTAssertEqual(queue.enqueue(frame("b"), conflationKey: nil, now: now), .queued)
            now += .seconds(9)
            _ = queue.take()
        }
        XCTAssertFalse(queue.isClosing, "270 s of traffic, never 10 s without a take")
    }

    func testACloseComesAfterTheQueuedFramesAndNothingOvertakesIt() {
        var queue = OutboxQueue(limit: 1_000, stallLimit: .seconds(10))
        XCTAssertEqual(queue.enqueue(frame("p1"), conflationKey: "vol", now: start), .queued)
        XCTAssertTrue(queue.close(code: CloseCode.tokenExpired, reason: "token expired", discardPending: false))
        // A later frame, even a position that could conflate with one queued before the close, is refused.
        XCTAssertEqual(queue.enqueue(frame("p2"), conflationKey: "vol", now: start), .closed)
        XCTAssertEqual(queue.enqueue(frame("info"), conflationKey: nil, now: start), .closed)
        let taken = queue.take()
        XCTAssertEqual(texts(taken), ["p1"])
        XCTAssertEqual(taken.close?.code, CloseCode.tokenExpired)
        XCTAssertTrue(queue.isFinished)
        XCTAssertNil(queue.take().close, "the close is taken once")
    }

    func testACloseWithDiscardDropsWhatWasQueued() {
        var queue = OutboxQueue(limit: 1_000, stallLimit: .seconds(10))
        XCTAssertEqual(queue.enqueue(frame("p1"), conflationKey: "vol", now: start), .queued)
        XCTAssertTrue(queue.close(code: 1002, reason: "client frames must be masked", discardPending: true))
        XCTAssertEqual(queue.bytes, 0)
        let taken = queue.take()
        XCTAssertEqual(texts(taken), [])
        XCTAssertEqual(taken.close, OutboxQueue.Close(code: 1002, reason: "client frames must be masked"))
    }

    func testTheFirstCloseWins() {
        var queue = OutboxQueue(limit: 1_000, stallLimit: .seconds(10))
        XCTAssertTrue(queue.close(code: CloseCode.goingAway, reason: "shutting down", discardPending: false))
        XCTAssertFalse(queue.close(code: CloseCode.tokenExpired, reason: "token expired", discardPending: true))
        XCTAssertEqual(queue.take().close?.code, CloseCode.goingAway)
    }

    func testAFinishedQueueDropsEverythingAndTakesNothingMore() {
        var queue = OutboxQueue(limit: 1_000, stallLimit: .seconds(10))
        XCTAssertEqual(queue.enqueue(frame("p1"), conflationKey: "vol", now: start), .queued)
        queue.close(code: 1000, reason: "bye", discardPending: false)
        queue.finish()
        XCTAssertFalse(queue.hasWork)
        XCTAssertEqual(queue.enqueue(frame("p2"), conflationKey: "vol", now: start), .closed)
        XCTAssertFalse(queue.close(code: 1000, reason: "again", discardPending: false))
        let taken = queue.take()
        XCTAssertEqual(taken.entries.count, 0)
        XCTAssertNil(taken.close)
    }

    func testDiscardingAChannelDropsOnlyItsFramesAndGivesBackTheirBytes() {
        var queue = OutboxQueue(limit: 12, stallLimit: .seconds(10))
        XCTAssertEqual(queue.enqueue(frame("p1-a"), conflationKey: "vol-a", now: start), .queued)
        XCTAssertEqual(queue.enqueue(frame("p1-b"), conflationKey: "vol-b", now: start), .queued)
        XCTAssertEqual(queue.enqueue(frame("info"), conflationKey: nil, now: start), .queued)
        XCTAssertEqual(queue.discard(conflationKey: "vol-a"), 1)
        XCTAssertEqual(queue.bytes, 8)
        XCTAssertEqual(queue.enqueue(frame("p2-b"), conflationKey: "vol-b", now: start), .queued, "room again")
        XCTAssertEqual(texts(queue.take()), ["p1-b", "info", "p2-b"])
    }
}
