/// Why a push message could not be encrypted for a subscription. The subscription's keys come from a browser
/// through the page, so each refusal says which key is wrong and how.
package enum WebPushEncryptionError: Error, Equatable, CustomStringConvertible {
    /// `p256dh` is not base64url.
    case p256dhNotBase64URL
    /// `p256dh` is not a 65-byte uncompressed point (starting with 0x04).
    case p256dhNotUncompressedPoint(byteCount: Int)
    /// `p256dh` is 65 bytes but not a point on the P-256 curve.
    case p256dhNotOnCurve
    /// `auth` is not base64url.
    case authNotBase64URL
    /// `auth` is not 16 bytes.
    case authWrongLength(byteCount: Int)
    /// The plaintext does not fit in one record of a 4096-byte body.
    case plaintextTooLarge(Int)
    /// The salt given to the testable variant is not 16 bytes.
    case badSalt
    /// The ECDH agreement failed.
    case keyAgreementFailed
    /// AES-GCM failed.
    case encryptionFailed

    package var description: String {
        switch self {
        case .p256dhNotBase64URL:
            "the subscription's p256dh key is not base64url"
        case .p256dhNotUncompressedPoint(let count):
            "the subscription's p256dh key has \(count) bytes; it must be a 65-byte uncompressed P-256 point starting with 0x04"
        case .p256dhNotOnCurve:
            "the subscription's p256dh key is not a point on the P-256 curve"
        case .authNotBase64URL:
            "the subscription's auth secret is not base64url"
        case .authWrongLength(let count):
            "the subscription's auth secret has \(count) bytes; it must have \(WebPushEncryption.authSecretByteCount)"
        case .plaintextTooLarge(let count):
            "a push message of \(count) bytes is too large: at most \(WebPushEncryption.maximumPlaintextByteCount) fit in one 4096-byte push"
        case .badSalt:
            "a Web Push salt must have 16 bytes"
        case .keyAgreementFailed:
            "the key agreement with the subscription's p256dh key failed"
        case .encryptionFailed:
            "AES-GCM encryption of the push message failed"
        }
    }
}
