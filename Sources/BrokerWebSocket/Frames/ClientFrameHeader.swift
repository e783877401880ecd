import NIOCore
import NIOWebSocket

/// The header of one frame a client sent (RFC 6455 §5.2), read where it lies in the socket's bytes
/// (``ClientFrameReader``).
///
/// The rules are NIO's decoder's, in its order, so that a client meets the same answers as before: as soon as a
/// frame's length is known (before its mask key and payload arrive), a length over the frame size, a fragmented
/// control frame and a control frame over 125 bytes are refused, with the decoder's own errors.
package struct ClientFrameHeader {
    /// The frame's first byte: FIN, RSV1-3 and the opcode.
    let firstByte: UInt8
    /// The mask key's four bytes as they lie in memory, if the frame is masked: NIO's `WebSocketMaskingKey` is
    /// made only for a frame handed on as a `WebSocketFrame` (its initializer is generic and not inlinable, a
    /// cost on every frame read that the fast path does without).
    let maskBytes: UInt32?
    /// Bytes from the frame's first to its payload's first.
    let headerBytes: Int
    let payloadBytes: Int

    var fin: Bool { firstByte & 0x80 != 0 }
    var maskKey: WebSocketMaskingKey? {
        maskBytes.map { bytes in withUnsafeBytes(of: bytes) { WebSocketMaskingKey($0)! } }
    }
    var opcode: WebSocketOpcode { WebSocketOpcode(encodedWebSocketOpcode: firstByte & 0x0F)! }
    /// Bytes from the frame's first to the next frame's.
    var frameBytes: Int { headerBytes + payloadBytes }

    /// The header of the frame that starts at `bytes`' reader index, or `nil` while its bytes are not all there
    /// yet (and its length is within the rules).
    /// - Throws: NIO's decoder's error for a frame it would refuse, as soon as the frame's length is known.
    static func read(_ bytes: ByteBuffer, maxFrameBytes: Int) throws(NIOWebSocketError) -> ClientFrameHeader? {
        try bytes.withUnsafeReadableBytes { raw throws(NIOWebSocketError) -> ClientFrameHeader? in
            guard raw.count >= 2 else { return nil }
            let firstByte = raw[0]
            let masked = raw[1] & 0x80 != 0
            var offset = 2
            let length: Int
            switch raw[1] & 0x7F {
            case 126:
                guard raw.count >= 4 else { return nil }
                length = Int(UInt16(raw[2]) << 8 | UInt16(raw[3]))
                offset = 4
            case 127:
                guard raw.count >= 10 else { return nil }
                let word = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 2, as: UInt64.self))
                guard word <= UInt64(Int.max) else { throw .invalidFrameLength }
                length = Int(word)
                offset = 10
            case let short:
                length = Int(short)
            }
            try check(firstByte: firstByte, length: length, maxFrameBytes: maxFrameBytes)
            var maskBytes: UInt32?
            if masked {
                guard raw.count >= offset + 4 else { return nil }
                maskBytes = raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
                offset += 4
            }
            return ClientFrameHeader(firstByte: firstByte, maskBytes: maskBytes, headerBytes: offset, payloadBytes: length)
        }
    }

    /// NIO's decoder's rules on a frame whose length is known, in its order.
    private static func check(firstByte: UInt8, length: Int, maxFrameBytes: Int) throws(NIOWebSocketError) {
        guard length <= maxFrameBytes else { throw .invalidFrameLength }
        let isControl = firstByte & 0x08 != 0
        guard !isControl || firstByte & 0x80 != 0 else { throw .fragmentedControlFrame }
        guard !isControl || length <= 125 else { throw .multiByteControlFrameLength }
    }

    /// The frame as NIO's decoder hands it on: its payload a slice of `bytes`, still masked.
    /// - Precondition: the whole frame is readable in `bytes`.
    func frame(in bytes: ByteBuffer) -> WebSocketFrame {
        let data = bytes.getSlice(at: bytes.readerIndex + headerBytes, length: payloadBytes)!
        return WebSocketFrame(
            fin: fin, rsv1: firstByte & 0x40 != 0, rsv2: firstByte & 0x20 != 0, rsv3: firstByte & 0x10 != 0, opcode: opcode, maskKey: maskKey,
            data: data)
    }
}
