/// Why a VAPID key could not be read or written, or a token not made; said for the operator.
package enum VAPIDKeyError: Error, Equatable, CustomStringConvertible {
    /// The PEM text is not a P-256 private key.
    case notAP256PrivateKey
    /// The key file could not be read, written or its folder made; `reason` is the system's.
    case file(path: String, reason: String)
    /// The key file's content is not a P-256 private key.
    case badFile(path: String)
    /// The subject is neither a `mailto:` nor an `https:` URI.
    case badSubject
    /// The endpoint is not an http(s) URL with a host.
    case badEndpoint
    /// `exp` is not after now.
    case expiryNotInFuture
    /// `exp` is more than 24 hours after now.
    case expiryTooFar
    /// The system's signing failed.
    case signingFailed

    package var description: String {
        switch self {
        case .notAP256PrivateKey:
            "the VAPID key is not a PEM private key on the P-256 curve (PKCS #8 'PRIVATE KEY' or 'EC PRIVATE KEY')"
        case .file(let path, let reason):
            "the VAPID key file \(path): \(reason)"
        case .badFile(let path):
            "the VAPID key file \(path) does not hold a PEM private key on the P-256 curve; move it away to have a new key made"
        case .badSubject:
            "the push subject must be a mailto: or https: URI (how a push service reaches the operator), e.g. mailto:ops@example.org"
        case .badEndpoint:
            "a push endpoint must be an http(s) URL with a host"
        case .expiryNotInFuture:
            "a VAPID token's expiry must be in the future"
        case .expiryTooFar:
            "a VAPID token's expiry must be at most 24 hours ahead (RFC 8292)"
        case .signingFailed:
            "signing the VAPID token failed"
        }
    }
}
