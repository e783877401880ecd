import BrokerProtocol
import XCTest

@testable import BrokerClient

/// The queue between a connection's socket and its reader: bounded whatever the broker sends and however slowly the
/// reader reads, never losing what a reader must see, and every wait ending at its deadline or its cancellation.
final class EventQueueTests: XCTestCase {
    private static func position(_ seq: Int64) -> BrokerEvent {
        let update = ServerFrame.PositionUpdate(channel: "donation:d-1", seq: seq, position: Position(lat: -34.6, lon: -58.4, timestamp: seq))
        return .frame(.position(update), text: "p\(seq)")
    }

    private static func ack(_ seq: Int64) -> BrokerEvent {
        .frame(.ack(.init(re: "p-\(seq)", seq: seq, tracking: true, watchers: 1)), text: "a\(seq)")
    }

    private static let delivered = BrokerEvent.frame(
        .unsubscribed(.init(re: nil, channel: "donation:d-1", donation: "d-1", reason: .delivered)), text: "delivered")

    private static func seq(_ event: BrokerEvent?) -> Int64? {
        if case .frame(.position(let update), _)? = event { return update.seq }
        return nil
    }

    /// Reads what the queue holds now, without waiting.
    private func drain(_ queue: EventQueue) async -> [BrokerEvent] {
        var events: [BrokerEvent] = []
        while queue.count > 0, let event = await queue.next(timeout: .zero) { events.append(event) }
        return events
    }

    func testAReaderThatNeverReadsWhile100kPositionsArriveKeepsTheNewestAndWhatItMustSee() async {
        let queue = EventQueue(limit: 4096)
        queue.push(Self.ack(0))
        for seq in 1...50_000 { queue.push(Self.position(Int64(seq))) }
        queue.push(Self.delivered)
        for seq in 50_001...100_000 { queue.push(Self.position(Int64(seq))) }
        queue.push(.closed(code: 1000, reason: nil))

        XCTAssertLessThanOrEqual(queue.count, 4096 + 1, "bounded: the capacity and the final closed")
        XCTAssertFalse(queue.isFinished, "positions were dropped: nothing forced the connection to end")
        let events = await drain(queue)
        XCTAssertEqual(events.first, Self.ack(0), "an ack is never dropped")
        XCTAssertTrue(events.contains(Self.delivered), "the end of the trip is never dropped")
        XCTAssertEqual(events.last, .closed(code: 1000, reason: nil), "the terminal event comes last")
        let seqs = events.compactMap(Self.seq)
        XCTAssertEqual(seqs.last, 100_000, "the newest position is kept")
        XCTAssertEqual(seqs, Array(Int64(100_000 - seqs.count + 1)...100_000), "the newest, in order, without gaps among them")
        XCTAssertEqual(queue.droppedPositions, 100_000 - seqs.count, "every dropped position is counted")
    }

    func testAQueueFullOfFramesThatMayNotBeDroppedEndsSoTheOwnerReconnects() async {
        let queue = EventQueue(limit: 64)
        for seq in 1...100_000 { queue.push(Self.ack(Int64(seq))) }
        XCTAssertTrue(queue.isFinished)
        let events = await drain(queue)
        XCTAssertEqual(events.count, 65)
        XCTAssertEqual(Array(events.prefix(64)), (1...64).map { Self.ack(Int64($0)) }, "what was queued is read in order")
        XCTAssertEqual(events.last, .closed(code: nil, reason: "the client fell behind: 64 events unread"))
        XCTAssertEqual(queue.droppedPositions, 0)
        let after = await queue.next(timeout: .seconds(30))
        XCTAssertNil(after, "over and drained: nil at once, not at the deadline")
    }

    func testAWaitWhoseDeadlinePassesReturnsNilAndTheNextEventIsKept() async {
        let queue = EventQueue()
        let start = ContinuousClock.now
        let nothing = await queue.next(timeout: .milliseconds(50))
        XCTAssertNil(nothing)
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(50))
        queue.push(Self.position(1))
        let next = await queue.next(timeout: .seconds(5))
        XCTAssertEqual(Self.seq(next), 1, "the expired wait took nothing with it")
    }

    func testManyConcurrentWaitsEachGetOneEventOrTheirDeadline() async throws {
        let queue = EventQueue()
        let expired = await withTaskGroup(of: BrokerEvent?.self) { group -> [BrokerEvent?] in
            for index in 0..<100 { group.addTask { await queue.next(timeout: .milliseconds(10 + index % 7 * 5)) } }
            var results: [BrokerEvent?] = []
            for await result in group { results.append(result) }
            return results
        }
        XCTAssertEqual(expired, Array(repeating: nil, count: 100), "each short wait ended at its own deadline")
        XCTAssertEqual(queue.waitingReaders, 0)

        let readers = 500
        let got = await withTaskGroup(of: BrokerEvent?.self) { group -> [BrokerEvent?] in
            for _ in 0..<readers { group.addTask { await queue.next(timeout: .seconds(30)) } }
            let deadline = ContinuousClock.now + .seconds(20)
            while queue.waitingReaders < readers && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
            for seq in 1...readers { queue.push(Self.position(Int64(seq))) }
            var results: [BrokerEvent?] = []
            for await result in group { results.append(result) }
            return results
        }
        XCTAssertEqual(got.count, readers)
        XCTAssertEqual(Set(got.compactMap(Self.seq)), Set(1...Int64(readers)), "each event went to exactly one reader")
        XCTAssertEqual(queue.count, 0)
    }

    func testACancelledWaitEndsAtOnceAndLosesNothing() async {
        let queue = EventQueue()
        let start = ContinuousClock.now
        let waiting = Task { await queue.next(timeout: .seconds(60)) }
        try? await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        let result = await waiting.value
        XCTAssertNil(result)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(10), "ended by the cancellation, not the deadline")

        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await queue.next(timeout: .seconds(60))
        }
        let early = await cancelledFirst.value
        XCTAssertNil(early, "a task cancelled before it waits does not wait")

        queue.push(Self.position(7))
        let next = await queue.next(timeout: .seconds(5))
        XCTAssertEqual(Self.seq(next), 7, "the event went to a reader still there")
    }

    func testFinishEndsEveryWaitAndLaterReadsDrainFirst() async {
        let queue = EventQueue()
        let waits = (0..<10).map { _ in Task { await queue.next(timeout: .seconds(60)) } }
        try? await Task.sleep(for: .milliseconds(50))
        queue.finish()
        for wait in waits {
            let result = await wait.value
            XCTAssertNil(result)
        }
        queue.push(Self.position(1))
        let after = await queue.next(timeout: .seconds(60))
        XCTAssertNil(after, "nothing is queued after the end")
    }
}
