import Foundation

/// A top-level member of a JOSE header or a JWT claims set, as the broker reads it.
package enum JOSEValue: Equatable, Sendable {
    case string(String)
    case bool(Bool)
    /// A JSON number; `nil` when a `Double` cannot hold it (beyond its range, or not zero but rounding to zero), which
    /// `JSONDecoder` refuses too.
    case number(Double?)
    case null
    /// An array whose elements are all strings (`aud`); it may be empty.
    case strings([String])
    /// An object, an array holding anything but strings, or a string with an unpaired surrogate escape (`"\ud800"`):
    /// valid JSON that no claim the broker reads can be (`JSONDecoder` will not make a `String` of such a string).
    case other
}

/// Why a JOSE header or claims set was refused by ``JOSEObjectReader``.
package enum JOSEObjectError: Error, Equatable {
    /// Not one JSON object in UTF-8 (RFC 8259), or nested deeper than ``JOSEObjectReader/maximumDepth``.
    case malformed
    /// A member name appears twice (RFC 7515 section 5.2 and RFC 7519 section 4 let a parser refuse it).
    case duplicateName
}

/// A strict reader of the two JSON objects of a JWT (the JOSE header and the claims), over their base64url-decoded
/// bytes, in place of Foundation's `JSONDecoder` (slow on Linux: it would be a large part of checking a token,
/// on every connect).
///
/// It reads every top-level member (strings, booleans, numbers, null, arrays of strings) and skips nested objects and
/// arrays after checking them. It is stricter than `JSONDecoder`, never looser, and only on input that is not JSON:
/// it refuses a byte-order mark, UTF-16/32, invalid UTF-8, unescaped control characters, bad escapes, trailing commas,
/// leading zeros, `1.`, anything after the object, and repeated member names (`JSONDecoder` keeps the first). Rules
/// and tests: docs/SECURITY.md, "3.5.3 The JOSE reader".
package enum JOSEObjectReader {
    /// The deepest nesting accepted, the top-level object included: `JSONDecoder`'s bound.
    static let maximumDepth = 512

    /// The members of the JSON object `bytes`, or why it is refused.
    static func read(_ bytes: Data) -> Result<[String: JOSEValue], JOSEObjectError> {
        bytes.withUnsafeBytes { raw in
            var parser = Parser(bytes: raw.bindMemory(to: UInt8.self))
            return parser.object()
        }
    }

    private struct Malformed: Error {}

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// Reused for every string: its bytes once escapes are undone.
        var scratch: [UInt8] = []

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
            scratch.reserveCapacity(64)
        }

        mutating func object() -> Result<[String: JOSEValue], JOSEObjectError> {
            var members: [String: JOSEValue] = [:]
            var repeated = false
            do {
                skipSpace()
                try expect(UInt8(ascii: "{"))
                skipSpace()
                if peek() == UInt8(ascii: "}") {
                    index += 1
                } else {
                    while true {
                        skipSpace()
                        // A member name must be a string of Unicode scalars (JSONDecoder refuses the object otherwise).
                        guard peek() == UInt8(ascii: "\""), let name = try string() else { throw Malformed() }
                        skipSpace()
                        try expect(UInt8(ascii: ":"))
                        skipSpace()
                        let value = try member()
                        if members.updateValue(value, forKey: name) != nil { repeated = true }
                        skipSpace()
                        let next = try take()
                        if next == UInt8(ascii: "}") { break }
                        guard next == UInt8(ascii: ",") else { throw Malformed() }
                    }
                }
                skipSpace()
                guard index == bytes.count else { throw Malformed() }
            } catch {
                return .failure(.malformed)
            }
            return repeated ? .failure(.duplicateName) : .success(members)
        }

        /// A top-level member's value (the object is depth 1).
        private mutating func member() throws -> JOSEValue {
            switch peek() {
            case UInt8(ascii: "\""):
                return try string().map(JOSEValue.string) ?? .other
            case UInt8(ascii: "["):
                return try stringArray()
            case UInt8(ascii: "{"):
                try skipValue(depth: 2)
                return .other
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                return try literal()
            default:
                return .number(try number(keep: true))
            }
        }

        /// An array at depth 2: its strings when all its elements are strings, else `.other`.
        private mutating func stringArray() throws -> JOSEValue {
            try expect(UInt8(ascii: "["))
            var strings: [String] = []
            var onlyStrings = true
            skipSpace()
            if peek() == UInt8(ascii: "]") {
                index += 1
                return .strings([])
            }
            while true {
                skipSpace()
                if peek() == UInt8(ascii: "\"") {
                    if let element = try string() { strings.append(element) } else { onlyStrings = false }
                } else {
                    try skipValue(depth: 3)
                    onlyStrings = false
                }
                skipSpace()
                let next = try take()
                if next == UInt8(ascii: "]") { break }
                guard next == UInt8(ascii: ",") else { throw Malformed() }
            }
            return onlyStrings ? .strings(strings) : .other
        }

        /// Checks and skips one value whose containers, if any, are at `depth`.
        private mutating func skipValue(depth: Int) throws {
            switch peek() {
            case UInt8(ascii: "\""):
                _ = try string()
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                guard depth <= JOSEObjectReader.maximumDepth else { throw Malformed() }
                let isObject = try take() == UInt8(ascii: "{")
                let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                skipSpace()
                if peek() == close {
                    index += 1
                    return
                }
                while true {
                    skipSpace()
                    if isObject {
                        guard peek() == UInt8(ascii: "\""), try string() != nil else { throw Malformed() }
                        skipSpace()
                        try expect(UInt8(ascii: ":"))
                        skipSpace()
                    }
                    try skipValue(depth: depth + 1)
                    skipSpace()
                    let next = try take()
                    if next == close { return }
                    guard next == UInt8(ascii: ",") else { throw Malformed() }
                }
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                _ = try literal()
            default:
                _ = try number(keep: false)
            }
        }

        private mutating func literal() throws -> JOSEValue {
            if matches("true") { return .bool(true) }
            if matches("false") { return .bool(false) }
            if matches("null") { return .null }
            throw Malformed()
        }

        /// Whether `word` (ASCII) is at `index`; if so, steps over it.
        private mutating func matches(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        /// A JSON number (RFC 8259 section 6); with `keep`, its value as `JSONDecoder` gives it (`nil` when a `Double`
        /// cannot hold it).
        private mutating func number(keep: Bool) throws -> Double? {
            let start = index
            if peek() == UInt8(ascii: "-") { index += 1 }
            guard let first = peek(), isDigit(first) else { throw Malformed() }
            index += 1
            if first == UInt8(ascii: "0") {
                if let next = peek(), isDigit(next) { throw Malformed() }
            } else {
                while let digit = peek(), isDigit(digit) { index += 1 }
            }
            if peek() == UInt8(ascii: ".") {
                index += 1
                guard let digit = peek(), isDigit(digit) else { throw Malformed() }
                while let digit = peek(), isDigit(digit) { index += 1 }
            }
            if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
                index += 1
                if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
                guard let digit = peek(), isDigit(digit) else { throw Malformed() }
                while let digit = peek(), isDigit(digit) { index += 1 }
            }
            guard keep, let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else { return nil }
            // JSONDecoder refuses a number that overflows to infinity or that is not zero yet rounds to zero.
            if value.isInfinite || (value == 0 && !Self.zeroAsJSONDecoderSees(bytes[start..<index])) { return nil }
            return value
        }

        /// A string at `index` (which is a quote). - Returns: its text, or `nil` when an escape is an unpaired
        /// surrogate. - Throws: on invalid UTF-8, an unescaped control character or a bad escape (not JSON).
        private mutating func string() throws -> String? {
            try expect(UInt8(ascii: "\""))
            scratch.removeAll(keepingCapacity: true)
            var unicode = true
            // Escapes may add non-ASCII bytes too.
            var ascii = true
            while true {
                let byte = try take()
                switch byte {
                case UInt8(ascii: "\""):
                    // ASCII needs no validation; `String(validating:as:)` costs generic metadata look-ups per call.
                    if ascii { return unicode ? String(decoding: scratch, as: UTF8.self) : nil }
                    guard let text = String(validating: scratch, as: UTF8.self) else { throw Malformed() }
                    return unicode ? text : nil
                case UInt8(ascii: "\\"):
                    let escape = try take()
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(escape)
                    case UInt8(ascii: "b"): scratch.append(0x08)
                    case UInt8(ascii: "f"): scratch.append(0x0C)
                    case UInt8(ascii: "n"): scratch.append(0x0A)
                    case UInt8(ascii: "r"): scratch.append(0x0D)
                    case UInt8(ascii: "t"): scratch.append(0x09)
                    case UInt8(ascii: "u"):
                        if !(try unicodeEscape()) { unicode = false }
                        if let last = scratch.last, last >= 0x80 { ascii = false }
                    default: throw Malformed()
                    }
                case 0..<0x20:
                    throw Malformed()
                case 0x80...:
                    ascii = false
                    scratch.append(byte)
                default:
                    scratch.append(byte)
                }
            }
        }

        /// The rest of a `\uXXXX` escape (and of the low surrogate escape after a high one), appended as UTF-8.
        /// - Returns: `false` for an unpaired surrogate.
        private mutating func unicodeEscape() throws -> Bool {
            let unit = try hex4()
            var scalar: Unicode.Scalar?
            if (0xD800..<0xDC00).contains(unit) {
                // A high surrogate pairs only with a `\u` low surrogate right after it.
                guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return false }
                let save = index
                index += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else {
                    index = save
                    return false
                }
                scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
            } else {
                scalar = Unicode.Scalar(unit)
            }
            guard let scalar else { return false }
            scratch.append(contentsOf: UTF8.encode(scalar)!)
            return true
        }

        private mutating func hex4() throws -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = try take()
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw Malformed()
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }

        /// Whether `JSONDecoder` (swift-foundation, Swift 6.3) takes a number that reads as 0 for a true zero rather than
        /// an underflow: it scans the text in blocks of four bytes, a digit 1-9 saying underflow and an `e`/`E` saying
        /// zero, but in the last `count % 4` bytes it looks for digits only. So `0e1` and `-0.0e1` are refused as
        /// "not representable" (an `exp` or `nbf` of `0e1` was "not a number of seconds") while `0e10` and `-0e1`
        /// are zero. Kept as it is so that the reader decides every such token as before (the differential test
        /// JOSEReaderDifferentialTests.testTimeClaimsInEveryNumberForm would show a toolchain that changes it).
        private static func zeroAsJSONDecoderSees(_ text: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
            let blocks = text.count / 4 * 4
            for (offset, byte) in text.enumerated() {
                switch byte {
                case UInt8(ascii: "1")...UInt8(ascii: "9"): return false
                case UInt8(ascii: "e"), UInt8(ascii: "E"): if offset < blocks { return true }
                default: continue
                }
            }
            return true
        }

        private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        private mutating func take() throws -> UInt8 {
            guard index < bytes.count else { throw Malformed() }
            defer { index += 1 }
            return bytes[index]
        }

        private mutating func expect(_ byte: UInt8) throws {
            guard try take() == byte else { throw Malformed() }
        }

        /// JSON's four whitespace bytes only.
        private mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }
    }
}
