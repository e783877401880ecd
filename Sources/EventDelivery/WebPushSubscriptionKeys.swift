import Crypto
import Foundation

/// A subscription's `p256dh` and `auth` keys, read and checked: the browser's P-256 public key (65-byte uncompressed
/// point on the curve) and its 16-byte auth secret.
package struct WebPushSubscriptionKeys: Sendable {
    /// The browser's public key.
    package let publicKey: P256.KeyAgreement.PublicKey
    /// The auth secret.
    package let authSecret: Data

    /// Reads base64url `p256dh` and `auth`, refusing anything a browser would not have made.
    package init(p256dh: String, auth: String) throws(WebPushEncryptionError) {
        guard let point = Base64Text.urlDecoded(p256dh) else { throw .p256dhNotBase64URL }
        guard point.count == 65, point.first == 0x04 else { throw .p256dhNotUncompressedPoint(byteCount: point.count) }
        do {
            publicKey = try P256.KeyAgreement.PublicKey(x963Representation: point)
        } catch {
            throw .p256dhNotOnCurve
        }
        guard let secret = Base64Text.urlDecoded(auth) else { throw .authNotBase64URL }
        guard secret.count == WebPushEncryption.authSecretByteCount else { throw .authWrongLength(byteCount: secret.count) }
        authSecret = secret
    }
}
