import BrokerProtocol
import DeterministicRandom
import NIOCore
import NIOWebSocket
import XCTest

@testable import BrokerWebSocket

/// The broker's word-at-a-time unmasking must give exactly NIO's `unmaskedData`, whatever the length, the key and
/// where the payload starts in its buffer (a frame read from the socket is a slice).
final class FrameUnmaskingTests: XCTestCase {
    func testEveryLengthAndKeyUnmasksAsNIODoes() {
        var generator = SeededRandom(seed: 0x5EED_F00D)
        for length in 0...300 {
            for _ in 0..<4 {
                let key = WebSocketMaskingKey((0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) })!
                let payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                // A slice that starts at an odd offset of its storage, as NIO's decoder hands a frame's data.
                let lead = Int.random(in: 0...7, using: &generator)
                var buffer = ByteBuffer(bytes: Array(repeating: 0xAA, count: lead) + payload + [0xBB, 0xCC])
                buffer.moveReaderIndex(forwardBy: lead)
                let data = buffer.getSlice(at: buffer.readerIndex, length: length)!
                let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: key, data: data)
                XCTAssertEqual(frame.withUnmaskedPayload { Array($0) }, Array(frame.unmaskedData.readableBytesView), "length \(length), key \(key)")
                var inPlace = Array(data.readableBytesView)
                inPlace.withUnsafeMutableBytes { WebSocketFrame.unmask($0, key: key) }
                XCTAssertEqual(inPlace, Array(frame.unmaskedData.readableBytesView), "in place: length \(length), key \(key)")
                XCTAssertEqual(frame.data, data, "the frame's own bytes are left as they were")
            }
        }
    }

    func testThePayloadReadInPlaceIsNIOsUnmaskedDataAndTheFrameIsLeftAsItWas() {
        var generator = SeededRandom(seed: 0x5CA7_C400)
        for length in [0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 64, 125, 126, 300, 1024, 1025, 5000] {
            for _ in 0..<4 {
                let key = WebSocketMaskingKey((0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) })!
                let payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                // A slice at an odd offset of a buffer another reference holds too, as NIO's read buffer is held.
                let lead = Int.random(in: 0...7, using: &generator)
                let readBuffer = ByteBuffer(bytes: Array(repeating: 0xAA, count: lead) + payload + [0xBB, 0xCC])
                let data = readBuffer.getSlice(at: lead, length: length)!
                let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: key, data: data)
                XCTAssertEqual(frame.withUnmaskedPayload { Array($0) }, Array(frame.unmaskedData.readableBytesView), "length \(length), key \(key)")
                XCTAssertEqual(Array(frame.data.readableBytesView), payload, "the frame's own bytes are left as they were")
                XCTAssertEqual(Array(readBuffer.readableBytesView), Array(repeating: 0xAA, count: lead) + payload + [0xBB, 0xCC])
            }
        }
        let joined = WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: "joined"))
        XCTAssertEqual(joined.withUnmaskedPayload { Array($0) }, Array("joined".utf8), "a frame without a key is read as it is")
        let key = WebSocketMaskingKey([1, 2, 3, 4])!
        let extended = WebSocketFrame(
            fin: true, opcode: .text, maskKey: key, data: ByteBuffer(bytes: Array(0..<23)), extensionData: ByteBuffer(bytes: [9, 9, 9]))
        XCTAssertEqual(extended.withUnmaskedPayload { Array($0) }, Array(extended.unmaskedData.readableBytesView))
    }

    func testAFrameWithoutAKeyIsItsData() {
        let frame = WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: #"{"type":"publish"}"#))
        XCTAssertEqual(frame.withUnmaskedPayload { Array($0) }, Array(#"{"type":"publish"}"#.utf8))
    }

    func testExtensionDataIsUnmaskedWithThePayloadAsNIODoes() {
        let key = WebSocketMaskingKey([1, 2, 3, 4])!
        let frame = WebSocketFrame(
            fin: true, opcode: .text, maskKey: key, data: ByteBuffer(bytes: Array(0..<23)), extensionData: ByteBuffer(bytes: [9, 9, 9]))
        XCTAssertEqual(frame.withUnmaskedPayload { Array($0) }, Array(frame.unmaskedData.readableBytesView))
    }
}
