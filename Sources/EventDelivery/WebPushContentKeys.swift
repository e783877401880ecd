import Crypto
import Foundation

/// The content encryption key and nonce of one Web Push message, derived as RFC 8291 section 3.4 and RFC 8188
/// section 2.2 say: the ECDH secret is mixed with the subscription's auth secret and both public keys into the
/// input keying material, which the message's salt turns into the key and the nonce.
struct WebPushContentKeys {
    let contentKey: SymmetricKey
    let nonce: AES.GCM.Nonce

    init(sharedSecret: SharedSecret, authSecret: Data, receiverPublic: Data, senderPublic: Data, salt: [UInt8]) throws {
        // key_info binds the keying material to this pair of keys, so it cannot be replayed to another subscription.
        var keyInfo = Data("WebPush: info".utf8)
        keyInfo.append(0)
        keyInfo.append(receiverPublic)
        keyInfo.append(senderPublic)
        let inputKeyingMaterial = sharedSecret.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: authSecret, sharedInfo: keyInfo, outputByteCount: 32)

        contentKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKeyingMaterial, salt: salt, info: Data("Content-Encoding: aes128gcm\0".utf8),
            outputByteCount: 16)
        let nonceBytes = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKeyingMaterial, salt: salt, info: Data("Content-Encoding: nonce\0".utf8),
            outputByteCount: 12)
        // The first record's nonce is the derived one XOR its sequence number 0: the derived one itself.
        nonce = try nonceBytes.withUnsafeBytes { try AES.GCM.Nonce(data: Data($0)) }
    }
}
