import Crypto
import Foundation

/// Names a donation's pushes to the push service (RFC 8030 `Topic`), so that a newer push replaces one still held.
///
/// The topic is an HMAC-SHA256 of the donation id under a key derived with HKDF-SHA256 from the broker's VAPID
/// private key, the one secret every broker that pushes holds (the same on every node of a cluster). Whoever can
/// guess donation ids cannot name a donation's topic, and the same donation has different topics on two deployments.
package struct PushTopicKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let key: SymmetricKey

    /// Derives the topic key from `vapidKey`.
    package init(vapidKey: VAPIDKey) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: vapidKey.privateKey.rawRepresentation), salt: Data("location-broker push".utf8),
            info: Data("location-broker push topic v1".utf8), outputByteCount: 32)
    }

    /// The donation's topic: 32 characters of the base64url alphabet (24 bytes of the HMAC), the most RFC 8030 allows.
    package func topic(donation: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(donation.utf8), using: key)
        return Data(Data(mac).prefix(24)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    package var description: String { "PushTopicKey(***)" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
