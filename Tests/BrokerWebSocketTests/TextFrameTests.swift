import NIOCore
import NIOEmbedded
import NIOWebSocket
import XCTest

@testable import BrokerCore
@testable import BrokerWebSocket

/// Frames queued pre-framed read back, through NIO's own frame decoder, as the text messages they carry.
final class TextFrameTests: XCTestCase {
    /// What NIO's WebSocket frame decoder (the one clients built on NIO use) reads from `frame`.
    private func decoded(_ frame: ByteBuffer) throws -> WebSocketFrame? {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 20)))
        try channel.writeInbound(frame)
        let decodedFrame = try channel.readInbound(as: WebSocketFrame.self)
        XCTAssertNil(try channel.readInbound(as: WebSocketFrame.self), "more than one frame")
        _ = try channel.finish()
        return decodedFrame
    }

    func testEveryLengthFormReadsBackAsOneUnmaskedTextFrame() throws {
        for length in [0, 1, 125, 126, 200, 65_535, 65_536, 70_000] {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 % 94 + 32) }
            let frame = try XCTUnwrap(try decoded(TextFrame.framed(payload)), "length \(length)")
            XCTAssertEqual(frame.opcode, .text)
            XCTAssertTrue(frame.fin)
            XCTAssertNil(frame.maskKey)
            XCTAssertEqual(Array(frame.data.readableBytesView), payload, "length \(length)")
            XCTAssertEqual(Array(TextFrame.prepared(payload).payload.readableBytesView), payload, "the prepared frame knows where its payload starts")
        }
    }

    func testAFrameWrittenIntoAnUnsharedBufferUsesItsStorage() throws {
        let first = TextFrame.prepared(Array(#"{"type":"position","seq":1,"lat":-34.6037}"#.utf8))
        var storage: ByteBuffer? = first.bytes
        let address = first.bytes.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
        _ = consume first
        // No longer than the first: the buffer has room for it.
        let payload = Array(#"{"type":"position","seq":2,"lat":-34.6}"#.utf8)

        let second = payload.withUnsafeBytes { TextFrame.prepared(bytes: $0, reusing: &storage) }

        XCTAssertNil(storage, "the buffer is taken")
        XCTAssertEqual(second.bytes.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }, address, "a buffer was allocated")
        XCTAssertEqual(second.bytes, TextFrame.framed(payload))
        XCTAssertEqual(Array(second.payload.readableBytesView), payload)
    }

    func testAFrameWrittenIntoABufferAQueueStillHoldsLeavesThatQueuesBytesAlone() throws {
        let queued = TextFrame.prepared(Array(#"{"type":"position","seq":1,"lat":-34.6037}"#.utf8))
        let before = Array(queued.bytes.readableBytesView)
        var storage: ByteBuffer? = queued.bytes
        let payload = Array(#"{"type":"position","seq":2,"lat":-12.5}"#.utf8)

        let next = payload.withUnsafeBytes { TextFrame.prepared(bytes: $0, reusing: &storage) }

        XCTAssertEqual(Array(queued.bytes.readableBytesView), before, "the queued frame was written over")
        XCTAssertEqual(next.bytes, TextFrame.framed(payload))
    }
}
