import Crypto
import Foundation

/// Signs webhook deliveries the Standard Webhooks way, so a receiver verifies them with any of that specification's
/// libraries: HMAC-SHA256 over `"{id}.{timestamp}.{body}"`, one `v1,<base64>` signature per secret.
///
/// Signing with every configured secret is what makes rotation painless: while the old and the new secret are both
/// configured, the receiver accepts a delivery with whichever one it holds.
package struct WebhookSigner: Sendable {
    /// The secrets that sign, in the order their signatures appear.
    package let secrets: [WebhookSecret]

    /// A signer with `secrets` (at least one).
    package init(secrets: [WebhookSecret]) throws(WebhookSecretError) {
        guard !secrets.isEmpty else { throw .noSecret }
        self.secrets = secrets
    }

    /// The three headers of a delivery of `body` (exactly the bytes sent).
    /// - Parameters:
    ///   - id: the event's id, the same on every attempt so the receiver can drop duplicates.
    ///   - timestamp: the attempt's time in seconds since the epoch; receivers refuse old ones against replays.
    package func headers(id: String, timestamp: Int64, body: some DataProtocol) -> WebhookHeaders {
        var signed = Data("\(id).\(timestamp).".utf8)
        signed.append(contentsOf: body)
        let signatures = secrets.map { secret in
            "v1," + Data(HMAC<SHA256>.authenticationCode(for: signed, using: secret.key)).base64EncodedString()
        }
        return WebhookHeaders(id: id, timestamp: String(timestamp), signature: signatures.joined(separator: " "))
    }

    /// The three headers of a delivery of the UTF-8 text `body`.
    package func headers(id: String, timestamp: Int64, body: String) -> WebhookHeaders {
        headers(id: id, timestamp: timestamp, body: Data(body.utf8))
    }
}
