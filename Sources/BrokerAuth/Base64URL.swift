import Foundation

/// Base64url (RFC 4648 section 5, no padding) as JWTs use it, decoded byte by byte: Foundation's string searches
/// and replacements, and its `Data(base64Encoded:)` over a translated copy, would be a large part of every
/// token's verification, so of every connect.
package enum Base64URL {
    /// The bytes of `text`, or `nil` when it is not base64.
    /// - Parameter strict: refuse `+`, `/` and `=` (a token's parts); otherwise they pass as plain base64.
    static func decode(_ text: some Collection<UInt8>, strict: Bool = true) -> Data? {
        if let bytes = decodeURLAlphabet(text) { return bytes }
        return strict ? nil : decodeAsPlainBase64(text)
    }

    /// The value of each byte in the base64url alphabet, 0xFF for any other byte.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
            table[Int(byte)] = UInt8(value)
        }
        return table
    }()

    /// Decodes text of the base64url alphabet only, as Foundation decodes its translation padded with `=`: a length
    /// of 4n+1 is refused, the unused low bits of the last character are ignored.
    private static func decodeURLAlphabet(_ text: some Collection<UInt8>) -> Data? {
        let count = text.count
        guard count % 4 != 1 else { return nil }
        var output = Data(count: count / 4 * 3 + max(0, count % 4 - 1))
        let complete = output.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) -> Bool in
            values.withUnsafeBufferPointer { values in
                var written = 0
                var group: UInt32 = 0
                var filled = 0
                for byte in text {
                    let value = values[Int(byte)]
                    guard value != 0xFF else { return false }
                    group = group << 6 | UInt32(value)
                    filled += 1
                    if filled == 4 {
                        out[written] = UInt8(truncatingIfNeeded: group >> 16)
                        out[written + 1] = UInt8(truncatingIfNeeded: group >> 8)
                        out[written + 2] = UInt8(truncatingIfNeeded: group)
                        written += 3
                        group = 0
                        filled = 0
                    }
                }
                if filled == 2 {
                    out[written] = UInt8(truncatingIfNeeded: group >> 4)
                } else if filled == 3 {
                    out[written] = UInt8(truncatingIfNeeded: group >> 10)
                    out[written + 1] = UInt8(truncatingIfNeeded: group >> 2)
                }
                return true
            }
        }
        return complete ? output : nil
    }

    /// The lenient reading (only `WatchTokenClaims`' routing uses it): `-` and `_` translated, then Foundation's
    /// plain base64 with padding added.
    private static func decodeAsPlainBase64(_ text: some Collection<UInt8>) -> Data? {
        var base64 = [UInt8]()
        base64.reserveCapacity(text.count + 3)
        for byte in text {
            switch byte {
            case UInt8(ascii: "-"): base64.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): base64.append(UInt8(ascii: "/"))
            default: base64.append(byte)
            }
        }
        base64.append(contentsOf: repeatElement(UInt8(ascii: "="), count: (4 - base64.count % 4) % 4))
        return Data(base64Encoded: Data(base64))
    }
}
