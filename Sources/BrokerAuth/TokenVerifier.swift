import BrokerCore
import Foundation
import BrokerProtocol
import JWTKit

/// Checks client tokens: the signature, `exp` (required), `nbf`, the configured audience and issuer,
/// `email_verified` when the identity is the e-mail; then reads the identity claim and puts it in canonical form.
///
/// Signatures: HS256 with `jwt_secret`; RS256 or ES256 with the key of a JWKS (`jwks_url` or `jwks_file`) that
/// the token's `kid` names, and only with the algorithm that key was read with. A token naming a `kid` the set
/// does not hold is refused, never tried against another key, and the JWKS refresher is told (the issuer may have
/// rotated its keys). Verification takes no lock but the key ring's, and awaits nothing.
package struct TokenVerifier: Sendable {
    private let hmac: (any JWTAlgorithm)?
    private let ring: KeyRing?
    private let identityClaim: String
    private let requireEmailVerified: Bool
    private let audience: String?
    private let issuer: String?

    /// Clock skew tolerated on `exp` and `nbf`, in seconds (the core's, which closes expired connections).
    static let leewaySeconds = TokenLeeway.seconds

    /// The longest token accepted, in bytes.
    static let maximumTokenBytes = 8192

    /// What a token must be to be accepted, as the broker's settings say.
    package struct Rules: Sendable {
        /// The HS256 secret (`jwt_secret`); `nil` when tokens come from a JWKS only.
        package var secret: String?
        /// The claim that names the identity (`identity_claim`).
        package var identityClaim = "sub"
        /// Whether an e-mail identity needs `email_verified: true`.
        package var requireEmailVerified = true
        /// The audience `aud` must name, and the issuer `iss` must be, when set.
        package var audience: String?
        package var issuer: String?

        package init(secret: String?, identityClaim: String = "sub", requireEmailVerified: Bool = true, audience: String? = nil, issuer: String? = nil) {
            self.secret = secret
            self.identityClaim = identityClaim
            self.requireEmailVerified = requireEmailVerified
            self.audience = audience
            self.issuer = issuer
        }
    }

    /// - Parameter keys: the JWKS in force, from the ``JWKSRefresher``; `nil` when tokens are HS256 only.
    package init(rules: Rules, keys: KeyRing? = nil) async throws {
        if let secret = rules.secret {
            let collection = JWTKeyCollection()
            await collection.add(hmac: HMACKey(from: Data(secret.utf8)), digestAlgorithm: .sha256)
            hmac = try await collection.getKey()
        } else {
            hmac = nil
        }
        ring = keys
        identityClaim = rules.identityClaim
        requireEmailVerified = rules.requireEmailVerified
        audience = rules.audience
        issuer = rules.issuer
    }

    /// Verifies `token` at time `now` (seconds since the Unix epoch). It is synchronous, so an upgrade is decided on
    /// the socket's event loop with no task and no actor hop (jwt-kit's key collection, an actor, is only used at
    /// start to make the HMAC checker).
    /// - Returns: the identity, or an `unauthorized` error whose message says what is wrong without echoing the token.
    package func verify(_ token: String, now: Int64 = Int64(Date().timeIntervalSince1970)) -> Result<VerifiedIdentity, BrokerError> {
        verify(JOSEToken(token), now: now)
    }

    /// ``verify(_:now:)`` of a token already split and whose header was already read (the upgrade reads it once
    /// to tell a watch link).
    package func verify(_ token: JOSEToken, now: Int64 = Int64(Date().timeIntervalSince1970)) -> Result<VerifiedIdentity, BrokerError> {
        func refuse(_ message: String) -> Result<VerifiedIdentity, BrokerError> { .failure(BrokerError(.unauthorized, message)) }
        guard !token.text.isEmpty, token.text.utf8.count <= Self.maximumTokenBytes else {
            return refuse("the token is empty or longer than \(Self.maximumTokenBytes) bytes")
        }
        guard let parts = token.parts, let headerMembers = token.header else { return refuse("the token is not a well-formed JWT") }
        let header: [String: JOSEValue]
        switch headerMembers {
        case .success(let members): header = members
        case .failure(.duplicateName): return refuse(Self.repeatedName)
        case .failure(.malformed): return refuse("the token is not a well-formed JWT")
        }
        if let refusal = Self.criticalExtensionRefusal(header) { return refuse(refusal) }
        // `alg` and `kid` are strings when present (JSONDecoder refused any other type but null, as this does).
        guard let alg = Self.optionalString(header["alg"]), let kid = Self.optionalString(header["kid"]) else {
            return refuse("the token is not a well-formed JWT")
        }
        let checker: any JWTAlgorithm
        switch alg {
        case "HS256"?:
            guard let hmac else { return refuse("the token's algorithm HS256 is not accepted: this broker verifies RS256 or ES256 tokens from its JWKS") }
            checker = hmac
        case let alg? where VerificationKeys.acceptedAlgorithms.contains(alg):
            guard let ring else { return refuse("the token's algorithm \(alg) is not accepted: this broker verifies HS256 tokens only") }
            guard let key = ring.keys.key(for: kid) else {
                ring.reportUnknownKey()
                return refuse("the token was signed with a key the broker does not know")
            }
            guard key.algorithm == alg else { return refuse("the token's algorithm \(alg) is not the algorithm of its key (\(key.algorithm))") }
            checker = key.checker
        default:
            return refuse("the token's algorithm is not accepted (HS256 with the broker's secret, RS256 or ES256 with a known key)")
        }
        let signed = token.withSigningInput(parts) { input in (try? checker.verify(parts.signature, signs: input)) == true }
        guard signed else { return refuse("the token's signature is not valid") }
        let claims: TokenClaims
        switch JOSEObjectReader.read(parts.payload) {
        case .failure(.duplicateName):
            return refuse(Self.repeatedName)
        case .failure(.malformed):
            return refuse("the token is not a well-formed JWT")
        case .success(let members):
            do {
                claims = try TokenClaims(members: members)
            } catch let error as JWTError {
                return refuse("the token's claims are not valid: \(error.reason ?? "bad claim")")
            } catch {
                return refuse("the token is not a well-formed JWT")
            }
        }
        return check(claims, now: now)
    }

    /// The refusal of a header that lists critical extensions (`crit`, RFC 7515 section 4.1.11): the broker
    /// understands none, and a reader must refuse a token whose `crit` names one it does not understand. Any `crit`
    /// is refused, whatever its value (an empty or malformed list is invalid too).
    static func criticalExtensionRefusal(_ header: [String: JOSEValue]) -> String? {
        guard let crit = header["crit"] else { return nil }
        if case .strings(let names) = crit, !names.isEmpty {
            return "the token's header lists critical extensions this broker does not understand (crit: \(names.joined(separator: ", ")))"
        }
        return "the token's header has a crit member that is not a list of extension names; this broker understands no critical extension"
    }

    /// The refusal of a header or claims set that names a member twice (RFC 7515 section 5.2, RFC 7519 section 4).
    static let repeatedName = "the token's header or claims name the same member twice"

    /// A header member that must be a string when present: `.some(nil)` when absent or null, `nil` when of another type.
    private static func optionalString(_ value: JOSEValue?) -> String?? {
        switch value {
        case nil, .null?: .some(nil)
        case .string(let text)?: .some(text)
        default: nil
        }
    }

    /// The checks on a token whose signature is valid.
    private func check(_ claims: TokenClaims, now: Int64) -> Result<VerifiedIdentity, BrokerError> {
        func refuse(_ message: String) -> Result<VerifiedIdentity, BrokerError> { .failure(BrokerError(.unauthorized, message)) }
        // A watch link is never a client token, whatever key signed it.
        if claims.strings["typ"] == WatchTokenClaims.type { return refuse("a watch link is not a client token; it can only watch its donation") }
        guard let expiresAt = claims.expiresAt else { return refuse("the token has no exp claim; tokens must expire") }
        guard expiresAt + Self.leewaySeconds > now else { return refuse("the token has expired") }
        if let notBefore = claims.notBefore, notBefore - Self.leewaySeconds > now { return refuse("the token is not valid yet (nbf)") }
        if let audience, !claims.audiences.contains(audience) { return refuse("the token is not meant for this broker (aud)") }
        if let issuer, claims.issuer != issuer { return refuse("the token was issued by an issuer the broker does not accept (iss)") }
        guard let raw = claims.strings[identityClaim] else { return refuse("the token has no \(identityClaim) claim to identify the caller") }
        // An e-mail the provider has not verified could be anybody's (Firebase lets a user sign up with any address).
        if identityClaim == "email", requireEmailVerified, claims.booleans["email_verified"] != true {
            return refuse("the token's email is not verified (email_verified must be true)")
        }
        switch Identity.canonicalize(raw) {
        case .success(let identity):
            return .success(VerifiedIdentity(identity: identity, expiresAt: expiresAt))
        case .failure(let why):
            return refuse("the token's \(identityClaim) claim is not a usable identity: \(why)")
        }
    }

    /// Signs an HS256 token with the configured secret; used by `location-broker token` to try the broker. With
    /// the `email` claim the token says `email_verified: true`: whoever holds the secret vouches for the address.
    package static func mintHS256(
        secret: String, identity: String, claim: String = "sub", ttlSeconds: Int64, audience: String? = nil, issuer: String? = nil,
        now: Int64 = Int64(Date().timeIntervalSince1970)
    ) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Data(secret.utf8)), digestAlgorithm: .sha256)
        var strings = [claim: identity]
        if let issuer { strings["iss"] = issuer }
        return try await keys.sign(
            TokenClaims(
                expiresAt: now + ttlSeconds, issuer: issuer, audiences: audience.map { [$0] } ?? [], strings: strings,
                booleans: claim == "email" ? ["email_verified": true] : [:]))
    }
}
