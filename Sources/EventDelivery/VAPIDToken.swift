import Crypto
import Foundation

/// The JWT of a VAPID `Authorization` header (RFC 8292 section 2): ES256, with the push service's origin as `aud`,
/// an `exp` at most 24 hours ahead and the operator's contact as `sub`. Checked when made, so a bad setting is
/// reported here rather than as a push service's 401 or 403.
struct VAPIDToken {
    let audience: String
    let subject: String
    let expiresAt: Int64

    init(audience: String, subject: String, expiresAt: Int64, now: Int64) throws(VAPIDKeyError) {
        let lowered = subject.lowercased()
        guard (lowered.hasPrefix("mailto:") && subject.count > "mailto:".count)
            || (lowered.hasPrefix("https://") && subject.count > "https://".count)
        else { throw .badSubject }
        guard expiresAt > now else { throw .expiryNotInFuture }
        guard expiresAt - now <= VAPIDKey.maximumLifetimeSeconds else { throw .expiryTooFar }
        self.audience = audience
        self.subject = subject
        self.expiresAt = expiresAt
    }

    /// The origin (RFC 6454) of `endpoint`: `scheme://host`, with `:port` only when it is not the scheme's default.
    static func origin(of endpoint: String) throws(VAPIDKeyError) -> String {
        guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = url.host, !host.isEmpty
        else { throw .badEndpoint }
        var origin = "\(scheme)://"
        // An IPv6 literal keeps its brackets in an origin; Foundation returns the host without them.
        origin += host.contains(":") && !host.hasPrefix("[") ? "[\(host.lowercased())]" : host.lowercased()
        if let port = url.port, port != (scheme == "https" ? 443 : 80) {
            origin += ":\(port)"
        }
        return origin
    }

    /// The compact JWT: header and claims in base64url, then the raw `r || s` signature (JWS's ES256 form, not DER).
    func signed(with key: P256.Signing.PrivateKey) throws(VAPIDKeyError) -> String {
        let header = #"{"typ":"JWT","alg":"ES256"}"#
        let claims: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            claims = try encoder.encode(Claims(aud: audience, exp: expiresAt, sub: subject))
        } catch {
            throw .badSubject
        }
        let input = Base64Text.urlEncoded(Data(header.utf8)) + "." + Base64Text.urlEncoded(claims)
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try key.signature(for: Data(input.utf8))
        } catch {
            throw .signingFailed
        }
        return input + "." + Base64Text.urlEncoded(signature.rawRepresentation)
    }

    private struct Claims: Encodable {
        let aud: String
        let exp: Int64
        let sub: String
    }
}
