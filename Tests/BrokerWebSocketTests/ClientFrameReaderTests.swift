import DeterministicRandom
import NIOCore
import NIOEmbedded
import NIOWebSocket
import XCTest

import BrokerProtocol
@testable import BrokerWebSocket

/// The connection handler reads its client's frames itself (``ClientFrameReader``) instead of through NIO's
/// `ByteToMessageHandler(WebSocketFrameDecoder)`: a client must meet the same frames and the same refusals as
/// before, however its bytes are split between reads, and nothing it announces may make the broker hold more
/// than one frame.
final class ClientFrameReaderTests: XCTestCase {
    private static let maxFrameBytes = 4_096

    /// What a reader made of a stream: the frames, in order, then the error that ended it, if one did, and the
    /// read (by index) in which it came.
    private struct Outcome: Equatable, CustomStringConvertible {
        var frames: [WebSocketFrame] = []
        var error: NIOWebSocketError?
        var errorRead: Int?

        var description: String {
            "\(frames.count) frames \(frames.map { "\($0.opcode)/\($0.fin)/\($0.rsv1)\($0.rsv2)\($0.rsv3)/\($0.maskKey.map { "\($0)" } ?? "-")/\($0.data.readableBytes)" }), error \(error.map { "\($0)" } ?? "none") at read \(errorRead ?? -1)"
        }
    }

    /// The frames and the error NIO's decoder finds in `reads`, fed one by one.
    private func nio(_ reads: [ByteBuffer]) throws -> Outcome {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: Self.maxFrameBytes)))
        defer { _ = try? channel.finish() }
        var outcome = Outcome()
        for (index, read) in reads.enumerated() {
            do {
                try channel.writeInbound(read)
            } catch let error as NIOWebSocketError {
                outcome.error = error
                outcome.errorRead = index
            }
            while let frame = try channel.readInbound(as: WebSocketFrame.self) { outcome.frames.append(frame) }
            if outcome.error != nil { break }
        }
        return outcome
    }

    /// The frames and the error the broker's reader finds in `reads`, fed one by one.
    private func broker(_ reads: [ByteBuffer], reader: inout ClientFrameReader) -> Outcome {
        var outcome = Outcome()
        for (index, read) in reads.enumerated() {
            do {
                try reader.read(read, maxFrameBytes: Self.maxFrameBytes) { header, bytes in
                    outcome.frames.append(header.frame(in: bytes))
                    return true
                }
            } catch {
                outcome.error = error
                outcome.errorRead = index
                break
            }
        }
        return outcome
    }

    func testFramesAndRefusalsAreNIOsDecodersHoweverTheBytesAreSplit() throws {
        // Seeded: the same hostile streams on every run, so that a failure can be read again.
        var random = SeededRandom(seed: 17)
        for round in 0..<600 {
            let stream = Self.hostileStream(&random)
            let reads = Self.split(stream, &random)
            var reader = ClientFrameReader()
            let expected = try nio(reads)
            let found = broker(reads, reader: &reader)
            XCTAssertEqual(found, expected, "round \(round): \(reads.map(\.readableBytes)) read as \(found), NIO read \(expected)")
            if found != expected { return }
        }
    }

    func testAFrameAnnouncedOverTheSizeIsRefusedBeforeItsPayloadArrives() {
        // 2^40 bytes announced: refused on the header alone, nothing waited for or kept.
        var header = ByteBuffer(bytes: [0x81, 0x80 | 127])
        header.writeInteger(UInt64(1) << 40)
        var reader = ClientFrameReader()
        let outcome = broker([header], reader: &reader)
        XCTAssertEqual(outcome.error, .invalidFrameLength)
        XCTAssertNil(reader.unreadBytes)
    }

    func testALengthPastWhatAnIntHoldsIsRefused() {
        var header = ByteBuffer(bytes: [0x82, 127])
        header.writeInteger(UInt64.max)
        var reader = ClientFrameReader()
        XCTAssertEqual(broker([header], reader: &reader).error, .invalidFrameLength)
    }

    func testTheStartOfAFrameKeptForTheNextReadDoesNotKeepTheReceiveBufferAlive() throws {
        // One 64 KiB receive buffer that ends with the first 8 bytes of a frame.
        var received = ByteBuffer(repeating: 0, count: 65_536 - 8)
        received.moveReaderIndex(to: received.writerIndex)
        received.writeBytes(Self.frame(first: 0x81, payload: Array(repeating: 0x20, count: 40), key: [1, 2, 3, 4]).prefix(8))
        var reader = ClientFrameReader()
        XCTAssertEqual(broker([received], reader: &reader).frames.count, 0)
        let kept = try XCTUnwrap(reader.unreadBytes)
        XCTAssertEqual(kept.readableBytes, 8)
        XCTAssertLessThan(kept.storageCapacity, 1_024, "a compact copy, not the receive buffer")
    }

    func testAFrameSentByteByByteIsReadOnceWhole() {
        let payload = Array(#"{"type":"subscribe","id":"s1","donation":"d-1"}"#.utf8)
        let bytes = Self.frame(first: 0x81, payload: payload, key: [9, 8, 7, 6])
        var reader = ClientFrameReader()
        let outcome = broker(bytes.map { ByteBuffer(bytes: [$0]) }, reader: &reader)
        XCTAssertEqual(outcome.frames.count, 1)
        XCTAssertEqual(outcome.frames.first.map { Array($0.unmaskedData.readableBytesView) }, payload)
        XCTAssertNil(reader.unreadBytes, "nothing kept once the frame is whole")
    }

    func testNoFrameAfterTheOneThatClosedTheSocketIsRead() throws {
        var bytes = ByteBuffer(bytes: Self.frame(first: 0x88, payload: [0x03, 0xE8], key: [1, 1, 1, 1]))
        bytes.writeBytes(Self.frame(first: 0x81, payload: Array("{}".utf8), key: [2, 2, 2, 2]))
        bytes.writeBytes(Self.frame(first: 0x81, payload: Array("{".utf8), key: [2, 2, 2, 2]).prefix(3))
        var reader = ClientFrameReader()
        var handed = 0
        try reader.read(bytes, maxFrameBytes: Self.maxFrameBytes) { _, _ in
            handed += 1
            return false
        }
        XCTAssertEqual(handed, 1)
        XCTAssertNil(reader.unreadBytes, "nothing kept for a socket that closed")
    }

    // MARK: - Streams

    /// One frame's bytes: `first` (FIN, RSV, opcode), the payload's length in its shortest form (or `lengthForm`:
    /// 7, 16 or 64 bits), the key when masked, the payload masked with it.
    private static func frame(first: UInt8, payload: [UInt8], key: [UInt8]?, lengthForm: Int? = nil) -> [UInt8] {
        var bytes: [UInt8] = [first]
        let mask: UInt8 = key == nil ? 0 : 0x80
        let form = lengthForm ?? (payload.count <= 125 ? 7 : payload.count <= 0xFFFF ? 16 : 64)
        switch form {
        case 7:
            bytes.append(mask | UInt8(payload.count))
        case 16:
            bytes.append(mask | 126)
            bytes.append(contentsOf: withUnsafeBytes(of: UInt16(payload.count).bigEndian, Array.init))
        default:
            bytes.append(mask | 127)
            bytes.append(contentsOf: withUnsafeBytes(of: UInt64(payload.count).bigEndian, Array.init))
        }
        guard let key else { return bytes + payload }
        return bytes + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    /// A few frames as a careless or hostile client sends them: any opcode (reserved ones too), FIN and RSV bits,
    /// masked or not, lengths in every form up to past the frame size, control frames fragmented or too long,
    /// and sometimes a header announcing more than an `Int` holds.
    private static func hostileStream(_ random: inout SeededRandom) -> [UInt8] {
        var stream: [UInt8] = []
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            // Mostly sane frames, so that the stream goes on long enough to split well.
            let sane = Int.random(in: 0..<4, using: &random) != 0
            let opcode = sane ? [0x1, 0x2, 0x0, 0x9, 0xA, 0x8].randomElement(using: &random)! : UInt8.random(in: 0...15, using: &random)
            let fin = sane && opcode >= 0x8 ? true : Bool.random(using: &random)
            let rsv: UInt8 = sane ? 0 : UInt8.random(in: 0...7, using: &random) << 4
            let lengths = opcode >= 0x8 && sane ? [0, 1, 2, 125] : [0, 1, 7, 125, 126, 127, 200, 4_095, 4_096, 4_097, 70_000]
            let length = lengths.randomElement(using: &random)!
            let forms = [length <= 125 ? 7 : nil, length <= 0xFFFF ? 16 : nil, 64].compactMap { $0 }
            let key: [UInt8]? = sane || Bool.random(using: &random) ? (0..<4).map { _ in UInt8.random(in: 0...255, using: &random) } : nil
            let payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            stream += frame(
                first: (fin ? 0x80 : 0) | rsv | opcode, payload: payload, key: key, lengthForm: forms.randomElement(using: &random))
        }
        if Int.random(in: 0..<20, using: &random) == 0 {
            stream += [0x82, 0xFF] + withUnsafeBytes(of: UInt64.max.bigEndian, Array.init)
        }
        return stream
    }

    /// `stream` cut into reads: sometimes one read, sometimes byte by byte, mostly at random places.
    private static func split(_ stream: [UInt8], _ random: inout SeededRandom) -> [ByteBuffer] {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return [ByteBuffer(bytes: stream)]
        case 1: return stream.prefix(300).map { ByteBuffer(bytes: [$0]) } + (stream.count > 300 ? [ByteBuffer(bytes: stream.dropFirst(300))] : [])
        default:
            var reads: [ByteBuffer] = []
            var start = 0
            while start < stream.count {
                let end = min(stream.count, start + Int.random(in: 1...max(1, stream.count / 3), using: &random))
                reads.append(ByteBuffer(bytes: stream[start..<end]))
                start = end
            }
            return reads
        }
    }
}
