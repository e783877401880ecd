import NIOCore
import NIOWebSocket

extension WebSocketFrame {
    /// The payload with the client's mask removed, as `unmaskedData` gives it, eight bytes at a time: NIO's
    /// unmasking goes byte by byte with an index check each (about 27 instructions a byte, a tenth of a
    /// volunteer's whole publish). A frame without a mask key is returned as it is; one with extension data
    /// (never negotiated by the broker) goes to NIO's, which masks the two together.
    var unmaskedPayload: ByteBuffer {
        guard let key = maskKey, extensionData == nil else { return unmaskedData }
        var payload = data
        payload.withUnsafeMutableReadableBytes { bytes in
            Self.unmask(bytes, key: key)
        }
        return payload
    }

    /// XORs `bytes` with `key` repeated from its first byte (RFC 6455 §5.3).
    static func unmask(_ bytes: UnsafeMutableRawBufferPointer, key: WebSocketMaskingKey) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        // The key twice over, in memory order, so that one 8-byte XOR masks eight payload bytes.
        let word = withUnsafeBytes(of: (key[0], key[1], key[2], key[3], key[0], key[1], key[2], key[3])) {
            $0.loadUnaligned(as: UInt64.self)
        }
        var offset = 0
        while offset + 8 <= count {
            let masked = base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            base.storeBytes(of: masked ^ word, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        // Every step above is a multiple of 4, so the key starts again at its first byte here.
        while offset < count {
            bytes[offset] ^= key[offset % 4]
            offset += 1
        }
    }
}
