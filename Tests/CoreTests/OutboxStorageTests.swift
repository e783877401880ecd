import BrokerProtocol
import NIOCore
import XCTest

@testable import BrokerCore

/// A delivery takes its frames into the writer's reused buffer, swapping storages with the outbox's queue, so
/// that a delivery allocates no storage: what is taken does not change, and no idle connection keeps a
/// burst's storage.
final class OutboxStorageTests: XCTestCase {
    private let start = ContinuousClock.now

    private func frame(_ text: String) -> PreparedFrame {
        Framing.plain.prepare(Array(text.utf8))
    }

    private func texts(_ buffer: DrainBuffer) -> [String] {
        buffer.frames.map { String(buffer: $0.frame.payload) }
    }

    func testFramesTakenIntoAReusedBufferAreTheQueuedOnesInOrderThenTheClose() {
        var queue = OutboxQueue(limit: 12, stallLimit: .seconds(10))
        var buffer = DrainBuffer()
        for round in 0..<3 {
            XCTAssertEqual(queue.enqueue(frame("a-\(round)"), conflationKey: "vol-a", now: start), .queued)
            XCTAssertNil(queue.take(into: &buffer))
            XCTAssertEqual(texts(buffer), ["a-\(round)"])
            XCTAssertEqual(queue.bytes, 0)
            XCTAssertFalse(queue.hasWork)
            buffer.removeAll()
            XCTAssertTrue(buffer.frames.isEmpty)
        }
        // Conflation works on the storage the queue was handed back.
        XCTAssertEqual(queue.enqueue(frame("p1-a"), conflationKey: "vol-a", now: start), .queued)
        XCTAssertEqual(queue.enqueue(frame("p1-b"), conflationKey: "vol-b", now: start), .queued)
        XCTAssertEqual(queue.enqueue(frame("info"), conflationKey: nil, now: start), .queued)
        XCTAssertEqual(queue.enqueue(frame("p2-a"), conflationKey: "vol-a", now: start), .conflated)
        queue.close(code: 1000, reason: "bye", discardPending: false)
        XCTAssertEqual(queue.take(into: &buffer), OutboxQueue.Close(code: 1000, reason: "bye"))
        XCTAssertEqual(texts(buffer), ["p2-a", "p1-b", "info"])
        XCTAssertTrue(queue.isFinished)
        XCTAssertEqual(queue.enqueue(frame("late"), conflationKey: nil, now: start), .closed)
    }

    /// One buffer serves many queues, as one event loop's drains share theirs: each queue's frames, and only them.
    func testOneBufferServesManyQueuesWithoutMixingTheirFrames() {
        var queues = (0..<5).map { _ in OutboxQueue(limit: 1_000, stallLimit: .seconds(10)) }
        var buffer = DrainBuffer()
        for round in 0..<4 {
            for index in queues.indices where (index + round) % 2 == 0 {
                _ = queues[index].enqueue(frame("q\(index)-r\(round)"), conflationKey: "vol", now: start)
            }
            for index in queues.indices {
                XCTAssertNil(queues[index].take(into: &buffer))
                XCTAssertEqual(texts(buffer), (index + round) % 2 == 0 ? ["q\(index)-r\(round)"] : [])
                buffer.removeAll()
            }
        }
        XCTAssertTrue(queues.allSatisfy { $0.storageFrames <= OutboxQueue.keptStorageEntries })
    }

    func testAConnectionSentOneFrameAtATimeKeepsOneSmallStorageAndABurstsStorageIsLetGo() {
        var queue = OutboxQueue(limit: 1_000, stallLimit: .seconds(10))
        var buffer = DrainBuffer()
        XCTAssertEqual(queue.storageFrames, 0, "a connection that was never sent anything holds no storage")
        for _ in 0..<10 {
            _ = queue.enqueue(frame("one"), conflationKey: "vol", now: start)
            _ = queue.take(into: &buffer)
            buffer.removeAll()
        }
        XCTAssertEqual(queue.storageFrames, 1, "steady single frames keep one frame's storage")
        // A burst grows the storage; once taken and written, neither the queue nor the buffer keeps it.
        for index in 0..<50 { _ = queue.enqueue(frame("burst-\(index)"), conflationKey: nil, now: start) }
        XCTAssertEqual(queue.storageFrames, 50)
        _ = queue.take(into: &buffer)
        XCTAssertEqual(buffer.frames.count, 50)
        XCTAssertLessThanOrEqual(queue.storageFrames, OutboxQueue.keptStorageEntries, "the idle queue holds a small storage at most")
        buffer.removeAll()
        XCTAssertEqual(buffer.storagePeak, 0, "the burst's storage is let go")
        // A purge that leaves one frame does not make the storage that held twenty small: it is let go too.
        for index in 0..<20 { _ = queue.enqueue(frame("p-\(index)"), conflationKey: index == 0 ? "keep" : "purge", now: start) }
        queue.discard(conflationKey: "purge")
        XCTAssertNil(queue.take(into: &buffer))
        XCTAssertEqual(texts(buffer), ["p-0"])
        XCTAssertLessThanOrEqual(queue.storageFrames, OutboxQueue.keptStorageEntries)
        buffer.removeAll()
        XCTAssertEqual(buffer.storagePeak, 0)
    }

    func testAClosedOrFinishedQueueHoldsNoStorage() {
        var buffer = DrainBuffer()
        var closed = OutboxQueue(limit: 1_000, stallLimit: .seconds(10))
        _ = closed.enqueue(frame("one"), conflationKey: nil, now: start)
        closed.close(code: 1000, reason: "bye", discardPending: false)
        XCTAssertNotNil(closed.take(into: &buffer))
        XCTAssertEqual(closed.storageFrames, 0)
        buffer.removeAll()

        var finished = OutboxQueue(limit: 1_000, stallLimit: .seconds(10))
        _ = finished.enqueue(frame("one"), conflationKey: nil, now: start)
        finished.finish()
        XCTAssertEqual(finished.storageFrames, 0)

        var slow = OutboxQueue(limit: 10, stallLimit: .seconds(10))
        _ = slow.enqueue(frame("aaaa"), conflationKey: nil, now: start)
        XCTAssertEqual(slow.enqueue(frame("too large for the rest"), conflationKey: nil, now: start), .overflowed)
        XCTAssertEqual(slow.storageFrames, 0, "the 4008 close drops the frames and their storage")
        XCTAssertEqual(slow.take(into: &buffer)?.code, CloseCode.slowConsumer)
    }
}
