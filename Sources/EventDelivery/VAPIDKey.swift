import Crypto
import Foundation

/// The broker's VAPID key (RFC 8292): a P-256 signing key whose public half the tracking page gives the browser as
/// `applicationServerKey` when it subscribes, and whose signature on each push proves to the push service that the
/// push comes from the server the subscription was made for.
///
/// Every node of a cluster must use the same key, or pushes from the other nodes are refused: the key lives in a
/// PEM file (`createOrLoad(pemFile:)`) rather than in memory only.
package struct VAPIDKey: Sendable {
    /// The longest a VAPID token may be valid, from RFC 8292 section 2: 24 hours.
    package static let maximumLifetimeSeconds: Int64 = 24 * 60 * 60

    /// The private key that signs the tokens.
    package let privateKey: P256.Signing.PrivateKey

    /// Wraps `privateKey`.
    package init(privateKey: P256.Signing.PrivateKey) {
        self.privateKey = privateKey
    }

    /// Reads a PEM private key (PKCS #8 `PRIVATE KEY` or SEC 1 `EC PRIVATE KEY`) on the P-256 curve.
    package init(pemRepresentation: String) throws(VAPIDKeyError) {
        do {
            privateKey = try P256.Signing.PrivateKey(pemRepresentation: pemRepresentation)
        } catch {
            throw .notAP256PrivateKey
        }
    }

    /// A new random key.
    package static func generate() -> VAPIDKey {
        VAPIDKey(privateKey: P256.Signing.PrivateKey())
    }

    /// The key in PEM (PKCS #8), as `createOrLoad(pemFile:)` writes it.
    package var pemRepresentation: String { privateKey.pemRepresentation }

    /// The public key as the 65-byte uncompressed point in base64url without padding: the page's
    /// `applicationServerKey`, and the `k` of the `Authorization` header.
    package var publicKeyBase64URL: String { Base64Text.urlEncoded(privateKey.publicKey.x963Representation) }

    /// The `Authorization` header value for a push to `endpoint`: `vapid t=<JWT>, k=<public key>`.
    /// - Parameters:
    ///   - endpoint: the subscription's endpoint; the token's audience is its origin.
    ///   - subject: how the push service reaches the operator: a `mailto:` or `https:` URI.
    ///   - expiresAt: the token's `exp` in seconds since the epoch: after `now`, at most 24 hours after it.
    ///   - now: the current time in seconds since the epoch.
    package func authorization(endpoint: String, subject: String, expiresAt: Int64, now: Int64 = Int64(Date().timeIntervalSince1970))
        throws(VAPIDKeyError) -> String
    {
        let token = try VAPIDToken(audience: try VAPIDToken.origin(of: endpoint), subject: subject, expiresAt: expiresAt, now: now)
        return "vapid t=\(try token.signed(with: privateKey)), k=\(publicKeyBase64URL)"
    }

    /// The `Authorization` header value for a push to `endpoint`; see `authorization(endpoint:subject:expiresAt:now:)`.
    package func authorization(endpoint: URL, subject: String, expiresAt: Int64, now: Int64 = Int64(Date().timeIntervalSince1970))
        throws(VAPIDKeyError) -> String
    {
        try authorization(endpoint: endpoint.absoluteString, subject: subject, expiresAt: expiresAt, now: now)
    }
}
