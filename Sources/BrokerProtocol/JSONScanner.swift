/// Reads JSON bytes by hand for the shapes the broker reads most (a phone's publish frame, a cluster node's
/// position event), without Foundation's JSON decoder, which costs more than the rest of their handling.
///
/// Each method reads one token after optional whitespace and returns `nil` (or `false`) for anything but the plain
/// form it knows: strings of printable ASCII without escapes, numbers in strict JSON grammar without exponents,
/// integers of at most 15 digits (18 where the member is read as an `Int64`). A reader built on it hands everything it declines to the strict decoder, so
/// whatever it accepts reads exactly as the strict decoder reads it, and every refusal still comes from one place.
package struct JSONScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    package init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Whether every byte was read, whitespace after the value aside.
    package mutating func isAtEnd() -> Bool {
        skipWhitespace()
        return index == bytes.count
    }

    /// A position object: numbers `lat`, `lon`, optional `accuracy`, `speed` and `heading`, an integer `timestamp`,
    /// each at most once and nothing else; `nil` for anything else.
    package mutating func positionObject() -> Position? {
        var lat: Double?, lon: Double?, accuracy: Double?, speed: Double?, heading: Double?
        var timestamp: Int64?
        guard take(UInt8(ascii: "{")) else { return nil }
        repeat {
            guard let key = rawString(), take(UInt8(ascii: ":")) else { return nil }
            // A key seen twice, or a value it cannot read, is the strict decoder's.
            if matches(key, "lat") {
                guard lat == nil, let value = number() else { return nil }
                lat = value
            } else if matches(key, "lon") {
                guard lon == nil, let value = number() else { return nil }
                lon = value
            } else if matches(key, "accuracy") {
                guard accuracy == nil, let value = number() else { return nil }
                accuracy = value
            } else if matches(key, "speed") {
                guard speed == nil, let value = number() else { return nil }
                speed = value
            } else if matches(key, "heading") {
                guard heading == nil, let value = number() else { return nil }
                heading = value
            } else if matches(key, "timestamp") {
                guard timestamp == nil, let value = integer() else { return nil }
                timestamp = value
            } else {
                return nil
            }
        } while take(UInt8(ascii: ","))
        guard take(UInt8(ascii: "}")), let lat, let lon, let timestamp else { return nil }
        return Position(lat: lat, lon: lon, accuracy: accuracy, speed: speed, heading: heading, timestamp: timestamp)
    }

    /// A string of printable ASCII without escapes, after optional whitespace.
    package mutating func string() -> String? {
        guard let range = rawString() else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// Where the contents of a string of printable ASCII without escapes lie, after optional whitespace.
    package mutating func rawString() -> Range<Int>? {
        guard take(UInt8(ascii: "\"")), let base = bytes.baseAddress else { return nil }
        let start = index
        let count = bytes.count
        var at = index
        // Eight bytes at a time: the first that ends the string or is refused is found in the word at once.
        while at + 8 <= count {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + at).loadUnaligned(as: UInt64.self))
            let found = Self.stopBytes(in: word)
            if found == 0 {
                at += 8
                continue
            }
            at += found.trailingZeroBitCount / 8
            return end(at: at, start: start)
        }
        while at < count {
            let byte = base[at]
            if byte != UInt8(ascii: "\""), byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") {
                at += 1
                continue
            }
            return end(at: at, start: start)
        }
        return nil
    }

    /// The string's end, if the byte at `at` (the first that is not plain printable ASCII) is its closing quote.
    private mutating func end(at: Int, start: Int) -> Range<Int>? {
        // Escapes, control characters and non-ASCII are the strict decoder's.
        guard bytes[at] == UInt8(ascii: "\"") else { return nil }
        index = at + 1
        return start..<at
    }

    /// The high bit of each byte of `word` (its first byte the lowest) that is a quote, a backslash, a control
    /// character or not ASCII (0x7F and above); above the lowest such byte, others may be marked too (a borrow or
    /// a carry goes up), so only the lowest mark is exact.
    private static func stopBytes(in word: UInt64) -> UInt64 {
        let quotes = ByteWord.equal(to: UInt8(ascii: "\""), in: word)
        let backslashes = ByteWord.equal(to: UInt8(ascii: "\\"), in: word)
        let controls = ByteWord.below(0x20, in: word)
        // A byte of 0x7F or more has its high bit set once one is added; only 0xFF carries, and it is marked.
        let beyondASCII = ((word &+ ByteWord.ones) | word) & ByteWord.highs
        return quotes | backslashes | controls | beyondASCII
    }

    /// Whether the bytes in `range` are exactly `literal`'s.
    package func matches(_ range: Range<Int>, _ literal: StaticString) -> Bool {
        guard range.count == literal.utf8CodeUnitCount else { return false }
        let expected = literal.utf8Start
        for offset in 0..<range.count where bytes[range.lowerBound + offset] != expected[offset] { return false }
        return true
    }

    /// A number in strict JSON grammar without an exponent: -?(0|[1-9][0-9]*)(.[0-9]+)?
    package mutating func number() -> Double? {
        skipWhitespace()
        let start = index
        _ = takeByte(UInt8(ascii: "-"))
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            guard digits() > 0 else { return nil }
        }
        if takeByte(UInt8(ascii: ".")) {
            guard digits() > 0 else { return nil }
        }
        // Exponents (rare from phones; and where tiny or huge values round) are the strict decoder's.
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") { return nil }
        let digits = UnsafeBufferPointer(rebasing: bytes[start..<index])
        // Most phones' numbers are exact in one operation; the others go through strtod, as before.
        if let value = ExactDecimal.value(of: digits) { return value }
        guard let value = Double(String(decoding: digits, as: UTF8.self)), value.isFinite else { return nil }
        return value
    }

    /// A whole number of at most `maximumDigits` digits, which may be up to 18 (always within `Int64`). The default,
    /// 15, keeps it exact as a `Double` too, for a member the strict decoder reads as a `Double` (a position's
    /// `timestamp`); a member it reads as an `Int64` (a seq, from the clock and so of 16 digits) may take 18.
    package mutating func integer(maximumDigits: Int = 15) -> Int64? {
        // Every caller passes a constant; in a release build a 19th digit that overflowed would trap in the
        // multiplication anyway, so the check is the debug build's and the publish path pays nothing for it.
        assert(maximumDigits <= 18, "19 digits may overflow Int64")
        skipWhitespace()
        let negative = takeByte(UInt8(ascii: "-"))
        let start = index
        var value: Int64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            index += 1
            if index - start > maximumDigits { return nil }
        }
        let count = index - start
        guard count > 0, count == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        // A fraction or an exponent is the strict decoder's to judge.
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] | 0x20 == UInt8(ascii: "e") { return nil }
        return negative ? -value : value
    }

    private mutating func digits() -> Int {
        let start = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
        return index - start
    }

    /// Skips whitespace, then takes `byte` if it comes next.
    package mutating func take(_ byte: UInt8) -> Bool {
        skipWhitespace()
        return takeByte(byte)
    }

    private mutating func takeByte(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Skips spaces, tabs and line ends.
    package mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }
}
