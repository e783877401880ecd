/// Tests on the eight bytes of a word at once, for the scans that look for a few byte values in JSON ("has less"
/// and "has zero byte" from Sean Anderson's bit twiddling hacks): the high bit of a byte survives only where the
/// byte is what is looked for. Whether any byte is marked is exact, and so is the lowest marked byte; above it, a
/// borrow may mark others too.
enum ByteWord {
    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let highs: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte of `word` below `limit` (at most 0x80).
    @inline(__always)
    static func below(_ limit: UInt64, in word: UInt64) -> UInt64 {
        (word &- ones &* limit) & ~word & highs
    }

    /// The high bit of each byte of `word` equal to `byte`.
    @inline(__always)
    static func equal(to byte: UInt8, in word: UInt64) -> UInt64 {
        below(1, in: word ^ (ones &* UInt64(byte)))
    }
}
