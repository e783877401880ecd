import NIOCore
import NIOWebSocket

extension WebSocketFrame {
    /// Calls `body` with the payload unmasked, without copying the frame: unmasking `data` in place copies all of it
    /// first (it shares its storage with NIO's read buffer, so it is never uniquely held), a malloc, a free and the
    /// copy per frame. Instead the payload is unmasked as it is copied once into a scratch buffer of this call
    /// (`withUnsafeTemporaryAllocation`: on the stack for a small frame, as a publish is; nothing kept per
    /// connection or per loop). A frame without a mask key (a message its assembler joined) is read where it is;
    /// one with extension data (never negotiated by the broker) goes through NIO's `unmaskedData`, which unmasks
    /// the two together.
    ///
    /// The bytes live only during `body`: whatever it keeps must be copied out of them (the decoder builds values
    /// and `String`s, which copy).
    func withUnmaskedPayload<Value>(_ body: (UnsafeRawBufferPointer) throws -> Value) rethrows -> Value {
        guard let key = maskKey, extensionData == nil else {
            return try unmaskedData.withUnsafeReadableBytes(body)
        }
        return try data.withUnsafeReadableBytes { masked in try Self.withUnmasked(masked, keyBytes: Self.keyBytes(key), body) }
    }

    /// Calls `body` with `masked` unmasked with the key `keyBytes` (its four bytes as they lie in memory) into a
    /// scratch buffer of this call (on the stack for a small payload), as ``withUnmaskedPayload(_:)`` does for a
    /// frame's.
    static func withUnmasked<Value>(
        _ masked: UnsafeRawBufferPointer, keyBytes: UInt32, _ body: (UnsafeRawBufferPointer) throws -> Value
    ) rethrows -> Value {
        try withUnsafeTemporaryAllocation(byteCount: masked.count, alignment: 8) { scratch in
            unmask(masked, into: scratch, keyBytes: keyBytes)
            return try body(UnsafeRawBufferPointer(scratch))
        }
    }

    /// Writes `masked` XORed with `key` (repeated from its first byte) into `unmasked`, which is at least as long.
    static func unmask(_ masked: UnsafeRawBufferPointer, into unmasked: UnsafeMutableRawBufferPointer, key: WebSocketMaskingKey) {
        unmask(masked, into: unmasked, keyBytes: keyBytes(key))
    }

    /// Writes `masked` XORed with the key `keyBytes` (its four bytes as they lie in memory, repeated from the
    /// first) into `unmasked`, which is at least as long.
    static func unmask(_ masked: UnsafeRawBufferPointer, into unmasked: UnsafeMutableRawBufferPointer, keyBytes: UInt32) {
        guard let source = masked.baseAddress, let target = unmasked.baseAddress else { return }
        let count = masked.count
        precondition(unmasked.count >= count, "the scratch buffer is shorter than the payload")
        // The key twice over, in memory order, so that one 8-byte XOR masks eight payload bytes.
        let word = withUnsafeBytes(of: (keyBytes, keyBytes)) { $0.loadUnaligned(as: UInt64.self) }
        var offset = 0
        while offset + 8 <= count {
            target.storeBytes(of: source.loadUnaligned(fromByteOffset: offset, as: UInt64.self) ^ word, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        // Every step above is a multiple of 4, so the key starts again at its first byte here.
        withUnsafeBytes(of: keyBytes) { key in
            while offset < count {
                target.storeBytes(of: masked[offset] ^ key[offset % 4], toByteOffset: offset, as: UInt8.self)
                offset += 1
            }
        }
    }

    /// The key's four bytes as they lie in memory.
    private static func keyBytes(_ key: WebSocketMaskingKey) -> UInt32 {
        withUnsafeBytes(of: (key[0], key[1], key[2], key[3])) { $0.loadUnaligned(as: UInt32.self) }
    }

    /// XORs `bytes` with `key` repeated from its first byte (RFC 6455 §5.3), in place (a fragment the assembler
    /// keeps).
    static func unmask(_ bytes: UnsafeMutableRawBufferPointer, key: WebSocketMaskingKey) {
        // Each word is read before it is written over: the copying unmask works on one buffer too.
        unmask(UnsafeRawBufferPointer(bytes), into: bytes, key: key)
    }
}
