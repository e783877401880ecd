/// Writes a `position` server frame straight to bytes, without JSONEncoder's reflection.
///
/// This is the publish path's one encoding: the bytes it returns are handed to every subscriber.
/// The output is byte-for-byte what ``WireJSON/encoder()`` writes for ``ServerFrame/position(_:)``
/// (sorted keys), which ProtocolTests check. It is on every publish's path, so it writes into one buffer sized
/// for the longest frame the channel allows: no intermediate `String` is trimmed or appended, and the array
/// does not grow piece by piece (ProtocolTests' `PositionFrameEncoderTests` hold its bytes to a plain reference
/// encoder's).
public enum PositionFrameEncoder {
    /// The most bytes `Double.description` writes ("-2.2250738585072014e-308" is 24), with a margin.
    static let maximumNumberBytes = 32
    /// The most bytes a position object takes: its keys and punctuation, five numbers and the timestamp.
    static let maximumPositionBytes = 64 + 5 * maximumNumberBytes + 20
    /// The frame's bytes around the channel and the position object, the sequence number included.
    private static let maximumFrameOverhead = 64 + 20

    /// Encodes `{"channel":..,"position":{..},"seq":..,"type":"position"}`.
    public static func encode(channel: String, seq: Int64, position: Position) -> [UInt8] {
        var channel = channel
        return channel.withUTF8 { channel in
            [UInt8](unsafeUninitializedCapacity: capacity(channel)) { buffer, count in
                count = write(channel: channel, seq: seq, position: position, into: buffer)
            }
        }
    }

    /// Encodes the same frame into a temporary buffer and hands its bytes to `body`, without making an array:
    /// the hub frames them for the transport at once, so they need not outlive the call.
    ///
    /// Inlinable so that the caller's module specializes it for its `Result`: unspecialized, the temporary
    /// allocation's `Result` metadata would be looked up at run time on every publish.
    @inlinable
    public static func withEncoded<Result>(
        channel: String, seq: Int64, position: Position, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result {
        var channel = channel
        return try channel.withUTF8 { channel in
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity(channel)) { buffer in
                let count = write(channel: channel, seq: seq, position: position, into: buffer)
                return try body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[..<count])))
            }
        }
    }

    /// The most bytes a frame on `channel` takes: an escape takes at most 6 bytes (\u00XX) for one byte of it.
    @usableFromInline
    static func capacity(_ channel: UnsafeBufferPointer<UInt8>) -> Int {
        maximumFrameOverhead + 6 * channel.count + maximumPositionBytes
    }

    /// Writes the frame into `buffer`, sized by ``capacity(_:)``, and answers how many bytes it took.
    @usableFromInline
    static func write(channel: UnsafeBufferPointer<UInt8>, seq: Int64, position: Position, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var writer = ByteWriter(buffer)
        writer.literal(#"{"channel":"#)
        writer.string(channel)
        writer.literal(#","position":"#)
        writer.position(position)
        writer.literal(#","seq":"#)
        writer.integer(seq)
        writer.literal(#","type":"position"}"#)
        return writer.count
    }

    /// Appends a position object with its keys in sorted order, leaving out absent optional fields.
    public static func appendPosition(_ out: inout [UInt8], _ position: Position) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximumPositionBytes) { buffer in
            var writer = ByteWriter(buffer)
            writer.position(position)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<writer.count]))
        }
    }

    /// Appends `string` as a JSON string, quoted and escaped as the frames' strings are.
    public static func appendString(_ out: inout [UInt8], _ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 + 6 * utf8.count) { buffer in
                var writer = ByteWriter(buffer)
                writer.string(utf8)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<writer.count]))
            }
        }
    }

    /// Appends `value` as a JSON integer.
    public static func appendInteger(_ out: inout [UInt8], _ value: Int64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var writer = ByteWriter(buffer)
            writer.integer(value)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<writer.count]))
        }
    }

    /// Writes into a buffer the caller has sized for what is written (each write checks it in debug builds).
    struct ByteWriter {
        private let buffer: UnsafeMutableBufferPointer<UInt8>
        /// Bytes written so far.
        private(set) var count = 0

        init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
            self.buffer = buffer
        }

        mutating func byte(_ byte: UInt8) {
            assert(count < buffer.count)
            buffer[count] = byte
            count += 1
        }

        @inline(__always)
        mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
            precondition(count + bytes.count <= buffer.count)
            (buffer.baseAddress! + count).update(from: source, count: bytes.count)
            count += bytes.count
        }

        @inline(__always)
        mutating func literal(_ literal: StaticString) {
            bytes(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        }

        /// A position object, keys sorted, absent optional fields left out.
        mutating func position(_ position: Position) {
            byte(UInt8(ascii: "{"))
            var first = true
            func field(_ writer: inout ByteWriter, _ key: StaticString, _ value: Double?) {
                guard let value else { return }
                if !first { writer.byte(UInt8(ascii: ",")) }
                first = false
                writer.literal(key)
                writer.number(value)
            }
            field(&self, #""accuracy":"#, position.accuracy)
            field(&self, #""heading":"#, position.heading)
            field(&self, #""lat":"#, position.lat)
            field(&self, #""lon":"#, position.lon)
            field(&self, #""speed":"#, position.speed)
            literal(#","timestamp":"#)
            integer(position.timestamp)
            byte(UInt8(ascii: "}"))
        }

        /// A finite double the way JSONEncoder writes it: `description`'s digits (the shortest form that reads back
        /// the same) with no ".0" on whole numbers. Zeros, and the decimals of at most 15 digits that positions
        /// carry, are written here (``ShortestDecimal``); anything else goes through `description`.
        mutating func number(_ value: Double) {
            if value == 0 {
                if value.sign == .minus { byte(UInt8(ascii: "-")) }
                byte(UInt8(ascii: "0"))
            } else if let decimal = ShortestDecimal.digits(of: value.magnitude) {
                if value < 0 { byte(UInt8(ascii: "-")) }
                self.decimal(decimal.mantissa, fractionDigits: decimal.fractionDigits)
            } else {
                described(value)
            }
        }

        /// `mantissa * 10^-fractionDigits` in plain notation: "0." before a mantissa shorter than its decimals,
        /// the decimals padded with zeros on the left, no point when there are none.
        mutating func decimal(_ mantissa: UInt64, fractionDigits: Int) {
            let digits = Self.decimalLength(mantissa)
            let wholeDigits = Swift.max(digits - fractionDigits, 1)
            let length = wholeDigits + (fractionDigits > 0 ? 1 + fractionDigits : 0)
            precondition(count + length <= buffer.count)
            // Written from the end of the number back to where it starts, two digits at a time (half the
            // divisions); the whole part is padded with zeros to its length, so a mantissa shorter than its
            // decimals gets its "0".
            var index = count + length
            var rest = mantissa
            let pairs = Self.digitPairs.utf8Start
            var fraction = fractionDigits
            while fraction >= 2 {
                let pair = Int(truncatingIfNeeded: rest % 100) &* 2
                rest /= 100
                index -= 2
                buffer[index] = pairs[pair]
                buffer[index + 1] = pairs[pair + 1]
                fraction -= 2
            }
            if fraction == 1 {
                index -= 1
                buffer[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            }
            if fractionDigits > 0 {
                index -= 1
                buffer[index] = UInt8(ascii: ".")
            }
            while index - count >= 2 {
                let pair = Int(truncatingIfNeeded: rest % 100) &* 2
                rest /= 100
                index -= 2
                buffer[index] = pairs[pair]
                buffer[index + 1] = pairs[pair + 1]
            }
            if index > count {
                buffer[index - 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            }
            count += length
        }

        /// Any other finite double: `description`'s bytes copied once, the ".0" of whole numbers left out by length.
        private mutating func described(_ value: Double) {
            var text = value.description
            text.withUTF8 { utf8 in
                precondition(utf8.count <= maximumNumberBytes)
                var length = utf8.count
                if length >= 2, utf8[length - 2] == UInt8(ascii: "."), utf8[length - 1] == UInt8(ascii: "0") { length -= 2 }
                bytes(UnsafeBufferPointer(rebasing: utf8[..<length]))
            }
        }

        /// An integer's decimal digits, as `String(value)` spells them, without making the string.
        mutating func integer(_ value: Int64) {
            if value < 0 { byte(UInt8(ascii: "-")) }
            // The magnitude is unsigned, so Int64.min has one too. Its length is known first, so the digits go
            // straight to their places from the last, two at a time (a sequence number has 16).
            var magnitude = value.magnitude
            let length = Self.decimalLength(magnitude)
            precondition(count + length <= buffer.count)
            var index = count + length
            let pairs = Self.digitPairs.utf8Start
            while magnitude >= 100 {
                let pair = Int(truncatingIfNeeded: magnitude % 100) &* 2
                magnitude /= 100
                index -= 2
                buffer[index] = pairs[pair]
                buffer[index + 1] = pairs[pair + 1]
            }
            if magnitude >= 10 {
                let pair = Int(truncatingIfNeeded: magnitude) &* 2
                buffer[index - 2] = pairs[pair]
                buffer[index - 1] = pairs[pair + 1]
            } else {
                buffer[index - 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude)
            }
            count += length
        }

        /// "00", "01", ... "99": two digits per look-up.
        private static let digitPairs: StaticString =
            "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

        /// How many decimal digits `value` has (1 for 0), by comparison rather than division.
        private static func decimalLength(_ value: UInt64) -> Int {
            var length = 1
            var bound: UInt64 = 10
            // 10^19 is the largest power of ten a UInt64 holds; every value below it has at most 19 digits.
            while length < 20 && value >= bound {
                length += 1
                if length == 20 { break }
                bound &*= 10
            }
            return length
        }

        /// A JSON string literal with the escapes JSON requires; runs that need none are copied whole.
        mutating func string(_ utf8: UnsafeBufferPointer<UInt8>) {
            byte(UInt8(ascii: "\""))
            // A channel name needs no escape (the usual case): it is checked eight bytes at a time, then copied whole.
            guard Self.needsEscape(utf8) else {
                bytes(utf8)
                byte(UInt8(ascii: "\""))
                return
            }
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes(UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                escape(byte)
                runStart = index + 1
            }
            bytes(UnsafeBufferPointer(rebasing: utf8[runStart...]))
            byte(UInt8(ascii: "\""))
        }

        /// Whether any byte of `utf8` is one JSON escapes (a control character, a quote or a backslash), read a
        /// word of eight bytes at a time (every channel name is checked on every publish): the words' tests below
        /// are exact for "any byte of the word".
        private static func needsEscape(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
            guard let base = utf8.baseAddress else { return false }
            let raw = UnsafeRawPointer(base)
            var index = 0
            while index + 8 <= utf8.count {
                if wordNeedsEscape(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) { return true }
                index += 8
            }
            while index < utf8.count {
                let byte = utf8[index]
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
                index += 1
            }
            return false
        }

        /// Whether a byte of `word` is below 0x20, a quote or a backslash (``ByteWord``: exact for "any byte").
        @inline(__always)
        private static func wordNeedsEscape(_ word: UInt64) -> Bool {
            let marks = ByteWord.below(0x20, in: word) | ByteWord.equal(to: UInt8(ascii: "\""), in: word)
                | ByteWord.equal(to: UInt8(ascii: "\\"), in: word)
            return marks != 0
        }

        private mutating func escape(_ byte: UInt8) {
            switch byte {
            case UInt8(ascii: "\""): literal("\\\"")
            case UInt8(ascii: "\\"): literal("\\\\")
            case 0x0A: literal("\\n")
            case 0x0D: literal("\\r")
            case 0x09: literal("\\t")
            case 0x08: literal("\\b")
            case 0x0C: literal("\\f")
            default:
                let hex: StaticString = "0123456789abcdef"
                literal("\\u00")
                self.byte(hex.utf8Start[Int(byte >> 4)])
                self.byte(hex.utf8Start[Int(byte & 0x0F)])
            }
        }
    }
}
