import BrokerCore
import Foundation
import NIOCore

/// Complete WebSocket text frames, header included, as the broker queues them: the hub frames each frame once
/// (``framing``) and the same bytes go to every subscriber's socket, with no frame header built per delivery.
///
/// Server frames are never masked (RFC 6455 §5.1), so the header is only FIN + opcode and the payload length.
package enum TextFrame {
    /// The WebSocket transport's framing, given to the hub at construction.
    package static let framing = Framing(reusing: { prepared(bytes: $0, reusing: &$1) })

    /// The frame carrying `payload` as one unfragmented text message.
    static func framed(_ payload: some Collection<UInt8>) -> ByteBuffer {
        prepared(payload).bytes
    }

    /// The frame carrying `payload`, with where its payload starts.
    static func prepared(_ payload: some Collection<UInt8>) -> PreparedFrame {
        var none: ByteBuffer?
        return Array(payload).withUnsafeBytes { prepared(bytes: $0, reusing: &none) }
    }

    /// The frame carrying `payload`, with where its payload starts: the header and the payload go into a buffer
    /// of their exact size with one write (once per frame the hub makes, so on every publish's path).
    /// - Parameter storage: a buffer to write the frame into instead of allocating one (the storage of the frame
    ///   a channel's history just dropped: a publish then allocates and frees no buffer). It is taken
    ///   (`nil` afterwards); if a queued frame still shares it, copy-on-write gives this frame fresh storage.
    static func prepared(bytes payload: UnsafeRawBufferPointer, reusing storage: inout ByteBuffer?) -> PreparedFrame {
        let count = payload.count
        let header = count < 126 ? 2 : count <= 0xFFFF ? 4 : 10
        var buffer: ByteBuffer
        if var recycled = storage.take() {
            recycled.clear()
            buffer = recycled
        } else {
            buffer = ByteBufferAllocator().buffer(capacity: header + count)
        }
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: header + count) { out in
            out[0] = 0x81
            switch header {
            case 2:
                out[1] = UInt8(count)
            case 4:
                out[1] = 126
                out[2] = UInt8(truncatingIfNeeded: count >> 8)
                out[3] = UInt8(truncatingIfNeeded: count)
            default:
                out[1] = 127
                // The 64-bit length, most significant byte first (network order).
                for index in 0..<8 { out[2 + index] = UInt8(truncatingIfNeeded: UInt64(count) >> (56 - 8 * index)) }
            }
            if let source = payload.baseAddress, count > 0 {
                (out.baseAddress! + header).copyMemory(from: source, byteCount: count)
            }
            return header + count
        }
        return PreparedFrame(bytes: buffer, payloadOffset: header)
    }
}
