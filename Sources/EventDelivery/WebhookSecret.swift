import Crypto
import Foundation

/// A Standard Webhooks signing secret: `whsec_` followed by the base64 of the key's bytes (24 to 64 bytes, as the
/// specification asks). The receiver holds the same text and verifies each delivery's signature with it.
///
/// The secret never prints: `description` and `dump` show only its length, so a log line or an error that mentions
/// a secret cannot leak it. `text` is the one way to read it back, for writing it into a configuration.
package struct WebhookSecret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The prefix every secret's text starts with.
    package static let prefix = "whsec_"
    /// The fewest key bytes accepted: the specification's floor of 192 bits.
    package static let minimumByteCount = 24
    /// The most key bytes accepted: the specification's ceiling of 512 bits.
    package static let maximumByteCount = 64
    /// How many random bytes `generate()` draws.
    package static let generatedByteCount = 32

    /// The key's bytes, as HMAC uses them.
    package let bytes: [UInt8]

    /// Reads `whsec_<base64>`; surrounding spaces are ignored (a comma-separated setting often has them).
    package init(_ text: String) throws(WebhookSecretError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw .empty }
        guard trimmed.hasPrefix(Self.prefix) else { throw .missingPrefix }
        let encoded = String(trimmed.dropFirst(Self.prefix.count))
        guard let bytes = Base64Text.decoded(encoded), !encoded.isEmpty else { throw .notBase64 }
        guard bytes.count >= Self.minimumByteCount else { throw .tooShort(bytes.count) }
        guard bytes.count <= Self.maximumByteCount else { throw .tooLong(bytes.count) }
        self.bytes = Array(bytes)
    }

    /// The secrets of a comma-separated list, in order (`webhook_secrets`: during a rotation both the new and the
    /// old secret sign). Empty items are refused, so a stray comma is noticed rather than silently ignored.
    package static func list(_ text: String) throws(WebhookSecretError) -> [WebhookSecret] {
        var secrets: [WebhookSecret] = []
        for (index, item) in text.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            do {
                secrets.append(try WebhookSecret(String(item)))
            } catch {
                throw .inList(position: index + 1, error)
            }
        }
        return secrets
    }

    /// A new secret of 32 bytes from the system's secure random source.
    package static func generate() -> WebhookSecret {
        var generator = SystemRandomNumberGenerator()
        return WebhookSecret(bytes: (0..<generatedByteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The secret's full text, `whsec_<base64>`, for a configuration file. Never log it.
    package var text: String { Self.prefix + Data(bytes).base64EncodedString() }

    /// The key HMAC-SHA256 signs with.
    var key: SymmetricKey { SymmetricKey(data: bytes) }

    /// Masked: the prefix and the key's length only.
    package var description: String { "\(Self.prefix)… (\(bytes.count) bytes, hidden)" }
    /// Masked, as `description`.
    package var debugDescription: String { description }
    /// Masked for `dump` and debuggers, which would otherwise print the stored bytes.
    package var customMirror: Mirror { Mirror(self, children: ["secret": description]) }
}
