import Foundation
import BrokerProtocol
import JWTKit

/// A client whose token was accepted.
struct VerifiedIdentity: Sendable, Equatable {
    /// The canonical (lower-cased) identity; it is also the identity's channel.
    let identity: String
    /// When the token expires, in seconds since the Unix epoch.
    let expiresAt: Int64
    /// Set for a watch link (``WatchTokenVerifier``): the one donation the connection may watch.
    var watch: WatchScope? = nil
}

/// Checks client tokens: the signature (HS256 secret, or RS256/ES256 keys from a JWKS file), `exp`
/// (required), `nbf`, and the configured audience and issuer; then reads the identity claim.
struct TokenVerifier: Sendable {
    private let keys: JWTKeyCollection
    private let identityClaim: String
    private let audience: String?
    private let issuer: String?

    /// Clock skew tolerated on `exp` and `nbf`, in seconds.
    static let leewaySeconds: Int64 = 30

    init(configuration: BrokerConfiguration) async throws {
        let keys = JWTKeyCollection()
        if let secret = configuration.jwtSecret {
            await keys.add(hmac: HMACKey(from: Data(secret.utf8)), digestAlgorithm: .sha256)
        }
        if let path = configuration.jwksFile {
            let json: String
            do {
                json = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw ConfigurationError(description: "cannot read the JWKS file \(path): \(error.localizedDescription)")
            }
            do {
                try await keys.add(jwksJSON: json)
            } catch {
                throw ConfigurationError(description: "the JWKS file \(path) holds no usable key: \(error)")
            }
        }
        self.keys = keys
        self.identityClaim = configuration.identityClaim
        self.audience = configuration.audience
        self.issuer = configuration.issuer
    }

    /// Verifies `token` at time `now` (seconds since the Unix epoch).
    /// - Returns: the identity, or an `unauthorized` error whose message says what is wrong without echoing the token.
    func verify(_ token: String, now: Int64 = Int64(Date().timeIntervalSince1970)) async -> Result<VerifiedIdentity, BrokerError> {
        func refuse(_ message: String) -> Result<VerifiedIdentity, BrokerError> { .failure(BrokerError(.unauthorized, message)) }
        guard !token.isEmpty, token.utf8.count <= 8192 else { return refuse("the token is empty or longer than 8192 bytes") }
        let claims: TokenClaims
        do {
            claims = try await keys.verify(token, as: TokenClaims.self)
        } catch let error as JWTError {
            switch error.errorType {
            case .signatureVerificationFailed: return refuse("the token's signature is not valid")
            case .malformedToken: return refuse("the token is not a well-formed JWT")
            case .unknownKID, .missingKIDHeader: return refuse("the token was signed with a key the broker does not know")
            case .unsupportedAlgorithm, .signingAlgorithmFailure, .noKeyProvided:
                return refuse("the token's algorithm is not accepted (HS256, RS256 or ES256 with a known key)")
            case .claimVerificationFailure: return refuse("the token's claims are not valid: \(error.reason ?? "bad claim")")
            default: return refuse("the token could not be verified")
            }
        } catch {
            return refuse("the token could not be verified")
        }
        // A watch link is never a client token, whatever key signed it.
        if claims.strings["typ"] == WatchTokenClaims.type { return refuse("a watch link is not a client token; it can only watch its donation") }
        guard let expiresAt = claims.expiresAt else { return refuse("the token has no exp claim; tokens must expire") }
        guard expiresAt + Self.leewaySeconds > now else { return refuse("the token has expired") }
        if let notBefore = claims.notBefore, notBefore - Self.leewaySeconds > now { return refuse("the token is not valid yet (nbf)") }
        if let audience, !claims.audiences.contains(audience) { return refuse("the token is not meant for this broker (aud)") }
        if let issuer, claims.issuer != issuer { return refuse("the token was issued by an issuer the broker does not accept (iss)") }
        guard let raw = claims.strings[identityClaim] else { return refuse("the token has no \(identityClaim) claim to identify the caller") }
        guard let identity = Identity.canonical(raw) else {
            return refuse("the token's \(identityClaim) claim is not a usable identity (1 to 254 characters, no spaces)")
        }
        return .success(VerifiedIdentity(identity: identity, expiresAt: expiresAt))
    }

    /// Signs an HS256 token with the configured secret; used by `location-broker token` to try the broker.
    static func mintHS256(
        secret: String, identity: String, claim: String = "sub", ttlSeconds: Int64, audience: String? = nil, issuer: String? = nil,
        now: Int64 = Int64(Date().timeIntervalSince1970)
    ) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Data(secret.utf8)), digestAlgorithm: .sha256)
        var strings = [claim: identity]
        if let issuer { strings["iss"] = issuer }
        return try await keys.sign(
            TokenClaims(expiresAt: now + ttlSeconds, issuer: issuer, audiences: audience.map { [$0] } ?? [], strings: strings))
    }
}
