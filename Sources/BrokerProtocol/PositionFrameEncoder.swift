/// Writes a `position` server frame straight to bytes, without JSONEncoder's reflection.
///
/// This is the publish path's one encoding: the bytes it returns are handed to every subscriber.
/// The output is byte-for-byte what ``WireJSON/encoder()`` writes for ``ServerFrame/position(_:)``
/// (sorted keys), which ProtocolTests check.
public enum PositionFrameEncoder {
    /// Encodes `{"channel":..,"position":{..},"seq":..,"type":"position"}`.
    public static func encode(channel: String, seq: Int64, position: Position) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + channel.utf8.count)
        append(&out, #"{"channel":"#)
        appendString(&out, channel)
        append(&out, #","position":"#)
        appendPosition(&out, position)
        append(&out, #","seq":"#)
        append(&out, String(seq))
        append(&out, #","type":"position"}"#)
        return out
    }

    /// Appends a position object with its keys in sorted order, leaving out absent optional fields.
    public static func appendPosition(_ out: inout [UInt8], _ position: Position) {
        out.append(UInt8(ascii: "{"))
        var first = true
        func field(_ name: String, _ value: Double?) {
            guard let value else { return }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(UInt8(ascii: "\""))
            append(&out, name)
            append(&out, "\":")
            appendNumber(&out, value)
        }
        field("accuracy", position.accuracy)
        field("heading", position.heading)
        field("lat", position.lat)
        field("lon", position.lon)
        field("speed", position.speed)
        append(&out, #","timestamp":"#)
        append(&out, String(position.timestamp))
        out.append(UInt8(ascii: "}"))
    }

    /// Writes a finite double the way JSONEncoder does: the shortest form that reads back the same,
    /// with no ".0" on whole numbers.
    static func appendNumber(_ out: inout [UInt8], _ value: Double) {
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        append(&out, text)
    }

    static func append(_ out: inout [UInt8], _ text: String) {
        out.append(contentsOf: text.utf8)
    }

    /// Writes a JSON string literal with the escapes JSON requires.
    static func appendString(_ out: inout [UInt8], _ text: String) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append(&out, "\\\"")
            case UInt8(ascii: "\\"): append(&out, "\\\\")
            case 0x0A: append(&out, "\\n")
            case 0x0D: append(&out, "\\r")
            case 0x09: append(&out, "\\t")
            case 0x08: append(&out, "\\b")
            case 0x0C: append(&out, "\\f")
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                append(&out, "\\u00")
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
