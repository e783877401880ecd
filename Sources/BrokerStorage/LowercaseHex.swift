extension Sequence<UInt8> {
    /// The bytes as lowercase hexadecimal, two digits each: without `String(format:)`, which costs a formatter per
    /// byte (a stored position's row key is hexed for every position a cluster node sends).
    package var lowercaseHex: String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
