import BrokerCore
import BrokerProtocol
import NIOCore
import XCTest

@testable import BrokerWebSocket

/// The heartbeat ping in a connection's outbox: one at most, and one that waits for data asks for no write of its
/// own, but goes with the next frames or pong the socket takes.
final class OutboxPingTests: XCTestCase {
    private func frame(_ text: String) -> PreparedFrame {
        Framing.plain.prepare(Array(text.utf8))
    }

    func testAPingWaitingForDataGoesWithTheNextFramesOnlyAndOnce() {
        let outbox = Outbox(limit: 4_096)
        outbox.owePing()
        XCTAssertFalse(outbox.takeForSocket().ping, "no frame to go with")
        XCTAssertEqual(outbox.enqueue(frame("position"), conflationKey: nil), .queued)
        let taken = outbox.takeForSocket()
        XCTAssertEqual(taken.queued.entries.count, 1)
        XCTAssertTrue(taken.ping, "the ping goes in the same write as the position")
        XCTAssertEqual(outbox.enqueue(frame("position"), conflationKey: nil), .queued)
        XCTAssertFalse(outbox.takeForSocket().ping, "it went once")
    }

    func testAPingWaitingForDataGoesWithAPongToo() {
        let outbox = Outbox(limit: 4_096)
        outbox.owePing()
        outbox.pushPong(ByteBuffer(bytes: [7]))
        let taken = outbox.takeForSocket()
        XCTAssertEqual(taken.pong, ByteBuffer(bytes: [7]))
        XCTAssertTrue(taken.ping)
    }

    func testAPingAskedForAloneGoesWithoutDataAndIsNotDelayedByAnotherThatWouldWait() {
        let outbox = Outbox(limit: 4_096)
        outbox.pushPing()
        outbox.owePing()
        XCTAssertTrue(outbox.takeForSocket().ping)
        outbox.owePing()
        outbox.pushPing()
        XCTAssertTrue(outbox.takeForSocket().ping)
        XCTAssertFalse(outbox.takeForSocket().ping, "one ping at most, however often it is asked for")
    }

    func testNoPingIsOwedOnceTheBrokerCloses() {
        let outbox = Outbox(limit: 4_096)
        outbox.owePing()
        outbox.close(code: 1000, reason: "bye", discardPending: false)
        outbox.owePing()
        let closing = outbox.takeForSocket()
        XCTAssertFalse(closing.ping)
        XCTAssertEqual(closing.queued.close, OutboxQueue.Close(code: 1000, reason: "bye"))
    }

    func testTheOutboxTellsWhetherFramesWereTakenSinceItWasLastAsked() {
        let outbox = Outbox(limit: 4_096)
        XCTAssertFalse(outbox.takeDataWritten())
        outbox.pushPong(ByteBuffer(bytes: [1]))
        _ = outbox.takeForSocket()
        XCTAssertFalse(outbox.takeDataWritten(), "a pong is no data")
        _ = outbox.enqueue(frame("ack"), conflationKey: nil)
        XCTAssertFalse(outbox.takeDataWritten(), "queued is not written")
        _ = outbox.takeForSocket()
        XCTAssertTrue(outbox.takeDataWritten())
        XCTAssertFalse(outbox.takeDataWritten(), "told once")
    }

    func testTheOutboxHoldsTheAnswerToTheNewestPingOnly() throws {
        // The outbox keeps the answer to the newest ping only.
        let outbox = Outbox(limit: 4_096)
        for byte: UInt8 in 1...100 { outbox.pushPong(ByteBuffer(bytes: [byte])) }
        let taken = outbox.takeForSocket()
        XCTAssertEqual(taken.pong, ByteBuffer(bytes: [100]))
        XCTAssertEqual(taken.queued.entries.count, 0)
        XCTAssertNil(outbox.takeForSocket().pong, "answered once")
        outbox.close(code: 1000, reason: "bye", discardPending: false)
        outbox.pushPong(ByteBuffer(bytes: [1]))
        let closing = outbox.takeForSocket()
        XCTAssertNil(closing.pong, "no pong after the broker's close")
        XCTAssertEqual(closing.queued.close, OutboxQueue.Close(code: 1000, reason: "bye"))
    }
}
