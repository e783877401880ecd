import BrokerCore
import Foundation
import NIOCore

/// Complete WebSocket text frames, header included, as the broker queues them: the hub frames each frame once
/// (``framing``) and the same bytes go to every subscriber's socket, with no frame header built per delivery.
///
/// Server frames are never masked (RFC 6455 §5.1), so the header is only FIN + opcode and the payload length.
enum TextFrame {
    /// The WebSocket transport's framing, given to the hub at construction.
    static let framing = Framing { prepared($0) }

    /// The frame carrying `payload` as one unfragmented text message.
    static func framed(_ payload: some Collection<UInt8>) -> ByteBuffer {
        prepared(payload).bytes
    }

    /// The frame carrying `payload`, with where its payload starts.
    static func prepared(_ payload: some Collection<UInt8>) -> PreparedFrame {
        let count = payload.count
        var buffer = ByteBufferAllocator().buffer(capacity: count + 10)
        buffer.writeInteger(UInt8(0x81))
        switch count {
        case ..<126:
            buffer.writeInteger(UInt8(count))
        case ...0xFFFF:
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(count))
        default:
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(count))
        }
        let header = buffer.writerIndex
        buffer.writeBytes(payload)
        return PreparedFrame(bytes: buffer, payloadOffset: header)
    }
}
