extension UnsafeRawBufferPointer {
    /// Whether the bytes are valid UTF-8 (a text frame's payload; 1007 otherwise, RFC 6455 §8.1).
    ///
    /// JSON from phones is almost always ASCII: the bytes are read eight at a time, and only from the first word
    /// with a byte of 0x80 or more is the rest handed to the standard library's full validation (everything before
    /// it is ASCII, so a character cannot start before that word).
    var isValidUTF8: Bool {
        guard let base = baseAddress else { return true }
        let count = self.count
        var offset = 0
        while offset + 8 <= count {
            if base.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 {
                return validateFully(from: offset)
            }
            offset += 8
        }
        while offset < count {
            if base.load(fromByteOffset: offset, as: UInt8.self) >= 0x80 {
                return validateFully(from: offset)
            }
            offset += 1
        }
        return true
    }

    /// The standard library's validation of the bytes from `offset` on.
    private func validateFully(from offset: Int) -> Bool {
        UnsafeRawBufferPointer(rebasing: self[offset...]).withMemoryRebound(to: UInt8.self) {
            String(validating: $0, as: UTF8.self) != nil
        }
    }
}
