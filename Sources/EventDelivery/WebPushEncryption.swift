import Crypto
import Foundation

/// Encrypts a push message for one subscription: RFC 8291 (Message Encryption for Web Push) in RFC 8188's
/// `aes128gcm` content coding, as one record. Only the browser that made the subscription can read it; the push
/// service carries bytes it cannot open.
///
/// The body is `salt (16) | record size (4, big-endian) | key id length (1) = 65 | sender's public key (65) |
/// ciphertext`, where the ciphertext is AES-128-GCM over the plaintext followed by the last-record delimiter 0x02.
package enum WebPushEncryption {
    /// The record size written in the header. One record holds the whole message.
    package static let recordSize: UInt32 = 4096
    /// The largest plaintext sent: push services need not accept a body over 4096 bytes (RFC 8030 section 7.2), and
    /// the header (86), the delimiter (1) and the tag (16) take the rest (RFC 8291 section 4).
    package static let maximumPlaintextByteCount = 3993
    /// The size of an `auth` secret (RFC 8291 section 3.2).
    package static let authSecretByteCount = 16

    /// The encrypted body for `plaintext` to the subscription with keys `p256dh` and `auth` (base64url, as
    /// `PushSubscription.toJSON()` gives them), with a random salt and a new ephemeral key, as every message needs.
    package static func encrypt(plaintext: some DataProtocol, p256dh: String, auth: String) throws(WebPushEncryptionError) -> Data {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return try encrypt(plaintext: plaintext, p256dh: p256dh, auth: auth, salt: salt, ephemeralKey: P256.KeyAgreement.PrivateKey())
    }

    /// `encrypt(plaintext:p256dh:auth:)` with the salt and the sender's ephemeral key given: for tests against
    /// RFC 8291's example only. Reusing either for a second message breaks the encryption.
    package static func encrypt(
        plaintext: some DataProtocol, p256dh: String, auth: String, salt: [UInt8], ephemeralKey: P256.KeyAgreement.PrivateKey
    ) throws(WebPushEncryptionError) -> Data {
        let receiver = try WebPushSubscriptionKeys(p256dh: p256dh, auth: auth)
        guard plaintext.count <= maximumPlaintextByteCount else { throw .plaintextTooLarge(plaintext.count) }
        guard salt.count == 16 else { throw .badSalt }

        let senderPublic = ephemeralKey.publicKey.x963Representation
        let keys: WebPushContentKeys
        do {
            let shared = try ephemeralKey.sharedSecretFromKeyAgreement(with: receiver.publicKey)
            keys = try WebPushContentKeys(
                sharedSecret: shared, authSecret: receiver.authSecret, receiverPublic: receiver.publicKey.x963Representation,
                senderPublic: senderPublic, salt: salt)
        } catch {
            throw .keyAgreementFailed
        }

        var record = Data(plaintext)
        record.append(0x02)  // the last (and only) record's delimiter, with no padding after it
        let sealed: AES.GCM.SealedBox
        do {
            sealed = try AES.GCM.seal(record, using: keys.contentKey, nonce: keys.nonce)
        } catch {
            throw .encryptionFailed
        }

        var body = Data(salt)
        withUnsafeBytes(of: recordSize.bigEndian) { body.append(contentsOf: $0) }
        body.append(UInt8(senderPublic.count))
        body.append(senderPublic)
        body.append(sealed.ciphertext)
        body.append(sealed.tag)
        return body
    }
}
