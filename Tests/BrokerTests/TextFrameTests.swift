import NIOCore
import NIOEmbedded
import NIOWebSocket
import XCTest

@testable import BrokerCore
@testable import LocationBroker

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
}
