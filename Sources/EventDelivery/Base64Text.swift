import Foundation

/// The two base64 spellings delivery reads and writes: plain base64 (RFC 4648 section 4) in Standard Webhooks
/// secrets and signatures, base64url without padding (section 5) in Web Push keys and JWTs.
///
/// Decoding is strict about the alphabet, so a key pasted with the wrong one is refused rather than read as other
/// bytes; only the padding is optional, because browsers and servers differ on it.
package enum Base64Text {
    /// `bytes` in base64url without padding.
    package static func urlEncoded(_ bytes: some DataProtocol) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// The bytes of base64url `text` (padding optional), or `nil` when it is not base64url.
    package static func urlDecoded(_ text: String) -> Data? {
        guard text.utf8.allSatisfy({ isLetterOrDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "=") })
        else { return nil }
        let plain = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        return decoded(plain)
    }

    /// The bytes of plain base64 `text` (padding optional), or `nil` when it is not base64.
    package static func decoded(_ text: String) -> Data? {
        guard text.utf8.allSatisfy({ isLetterOrDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "=") })
        else { return nil }
        // Padding, when present, must be where base64 puts it: at the end, making the length a multiple of 4.
        let unpadded = text.prefix(while: { $0 != "=" })
        let padding = text.count - unpadded.count
        guard padding <= 2, text.dropFirst(unpadded.count).allSatisfy({ $0 == "=" }) else { return nil }
        if padding > 0 && text.count % 4 != 0 { return nil }
        let padded = String(unpadded) + String(repeating: "=", count: (4 - unpadded.count % 4) % 4)
        return Data(base64Encoded: padded)
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
