/// Writes a `position` server frame straight to bytes, without JSONEncoder's reflection.
///
/// This is the publish path's one encoding: the bytes it returns are handed to every subscriber.
/// The output is byte-for-byte what ``WireJSON/encoder()`` writes for ``ServerFrame/position(_:)``
/// (sorted keys), which ProtocolTests check. It is on every publish's path, so it writes bytes directly:
/// no intermediate `String` is built, trimmed or appended (issue 17).
public enum PositionFrameEncoder {
    /// Encodes `{"channel":..,"position":{..},"seq":..,"type":"position"}`.
    public static func encode(channel: String, seq: Int64, position: Position) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + channel.utf8.count)
        appendLiteral(&out, #"{"channel":"#)
        appendString(&out, channel)
        appendLiteral(&out, #","position":"#)
        appendPosition(&out, position)
        appendLiteral(&out, #","seq":"#)
        appendInteger(&out, seq)
        appendLiteral(&out, #","type":"position"}"#)
        return out
    }

    /// Appends a position object with its keys in sorted order, leaving out absent optional fields.
    public static func appendPosition(_ out: inout [UInt8], _ position: Position) {
        out.append(UInt8(ascii: "{"))
        var first = true
        func field(_ key: StaticString, _ value: Double?) {
            guard let value else { return }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            appendLiteral(&out, key)
            appendNumber(&out, value)
        }
        field(#""accuracy":"#, position.accuracy)
        field(#""heading":"#, position.heading)
        field(#""lat":"#, position.lat)
        field(#""lon":"#, position.lon)
        field(#""speed":"#, position.speed)
        appendLiteral(&out, #","timestamp":"#)
        appendInteger(&out, position.timestamp)
        out.append(UInt8(ascii: "}"))
    }

    /// Writes a finite double the way JSONEncoder does: the shortest form that reads back the same,
    /// with no ".0" on whole numbers. `description`'s bytes are copied once, the ".0" left out by length.
    static func appendNumber(_ out: inout [UInt8], _ value: Double) {
        var text = value.description
        text.withUTF8 { utf8 in
            var count = utf8.count
            if count >= 2, utf8[count - 2] == UInt8(ascii: "."), utf8[count - 1] == UInt8(ascii: "0") { count -= 2 }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[..<count]))
        }
    }

    /// Writes an integer's decimal digits, as `String(value)` spells them, without making the string.
    static func appendInteger(_ out: inout [UInt8], _ value: Int64) {
        // 20 digits and a sign cover every Int64, Int64.min included (its magnitude is taken as unsigned).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude != 0
            if value < 0 { out.append(UInt8(ascii: "-")) }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Appends a literal's UTF-8 bytes in one copy.
    static func appendLiteral(_ out: inout [UInt8], _ literal: StaticString) {
        out.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Writes a JSON string literal with the escapes JSON requires; runs that need none are copied whole.
    static func appendString(_ out: inout [UInt8], _ text: String) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                appendEscape(&out, byte)
                runStart = index + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(_ out: inout [UInt8], _ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): appendLiteral(&out, "\\\"")
        case UInt8(ascii: "\\"): appendLiteral(&out, "\\\\")
        case 0x0A: appendLiteral(&out, "\\n")
        case 0x0D: appendLiteral(&out, "\\r")
        case 0x09: appendLiteral(&out, "\\t")
        case 0x08: appendLiteral(&out, "\\b")
        case 0x0C: appendLiteral(&out, "\\f")
        default:
            let hex: StaticString = "0123456789abcdef"
            appendLiteral(&out, "\\u00")
            out.append(hex.utf8Start[Int(byte >> 4)])
            out.append(hex.utf8Start[Int(byte & 0x0F)])
        }
    }
}
