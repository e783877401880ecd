import BrokerCore
import BrokerProtocol
import Foundation
import JWTKit

@testable import BrokerAuth

/// The client-token check as it was before the JOSE reader: Foundation's `JSONDecoder` on the JOSE header
/// (twice: to route a watch link, then to verify) and on the claims. Kept here, whole, as the oracle of
/// JOSEReaderDifferentialTests: the reader must decide every token as this does, or refuse where this accepts
/// input that is not JSON.
struct JOSEReaderOracle {
    let hmac: any JWTAlgorithm
    let identityClaim: String
    let requireEmailVerified: Bool
    let audience: String?
    let issuer: String?

    private struct Header: Decodable {
        let alg: String?
        let kid: String?
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The claims as TokenClaims.init(from:) read them.
    struct Claims: Decodable, Equatable {
        var expiresAt: Int64?
        var notBefore: Int64?
        var issuer: String?
        var audiences: [String]
        var strings: [String: String]
        var booleans: [String: Bool]

        init(_ claims: TokenClaims) {
            expiresAt = claims.expiresAt
            notBefore = claims.notBefore
            issuer = claims.issuer
            audiences = claims.audiences
            strings = claims.strings
            booleans = claims.booleans
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            var strings: [String: String] = [:]
            var booleans: [String: Bool] = [:]
            for key in container.allKeys {
                if let value = try? container.decode(String.self, forKey: key) {
                    strings[key.stringValue] = value
                } else if let value = try? container.decode(Bool.self, forKey: key) {
                    booleans[key.stringValue] = value
                }
            }
            self.strings = strings
            self.booleans = booleans
            self.expiresAt = try Self.seconds(container, "exp")
            self.notBefore = try Self.seconds(container, "nbf")
            self.issuer = strings["iss"]
            let audience = AnyKey(stringValue: "aud")
            if let single = try? container.decode(String.self, forKey: audience) {
                self.audiences = [single]
            } else if let many = try? container.decode([String].self, forKey: audience) {
                self.audiences = many
            } else {
                self.audiences = []
            }
        }

        private static func seconds(_ container: KeyedDecodingContainer<AnyKey>, _ name: String) throws -> Int64? {
            let key = AnyKey(stringValue: name)
            guard container.contains(key) else { return nil }
            guard let value = try? container.decode(Double.self, forKey: key), value.isFinite, abs(value) < 1e15 else {
                throw JWTError.claimVerificationFailure(failedClaim: nil, reason: "\(name) must be a number of seconds")
            }
            return Int64(value.rounded(.down))
        }
    }

    /// The old `WatchTokenClaims.isMarked`.
    static func isMarked(_ token: String) -> Bool {
        guard let dot = token.firstIndex(of: "."), token.distance(from: token.startIndex, to: dot) <= 1024 else { return false }
        struct Header: Decodable { let typ: String? }
        guard let data = Base64URL.decode(token[..<dot].utf8, strict: false), let header = try? JSONDecoder().decode(Header.self, from: data) else { return false }
        return header.typ == WatchTokenClaims.headerType
    }

    /// The claims of a claims set as JSONDecoder read them: the claims, or the refusal message.
    static func claims(_ payload: Data) -> Result<Claims, BrokerError> {
        do {
            return .success(try JSONDecoder().decode(Claims.self, from: payload))
        } catch let error as JWTError {
            return .failure(BrokerError(.unauthorized, "the token's claims are not valid: \(error.reason ?? "bad claim")"))
        } catch {
            return .failure(BrokerError(.unauthorized, "the token is not a well-formed JWT"))
        }
    }

    /// The old `TokenVerifier.verify`, HS256 only (no JWKS).
    func verify(_ token: String, now: Int64) -> Result<VerifiedIdentity, BrokerError> {
        func refuse(_ message: String) -> Result<VerifiedIdentity, BrokerError> { .failure(BrokerError(.unauthorized, message)) }
        guard !token.isEmpty, token.utf8.count <= TokenVerifier.maximumTokenBytes else {
            return refuse("the token is empty or longer than \(TokenVerifier.maximumTokenBytes) bytes")
        }
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let payloadData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]), let header = try? JSONDecoder().decode(Header.self, from: headerData)
        else { return refuse("the token is not a well-formed JWT") }
        switch header.alg {
        case "HS256"?: break
        case let alg? where VerificationKeys.acceptedAlgorithms.contains(alg):
            return refuse("the token's algorithm \(alg) is not accepted: this broker verifies HS256 tokens only")
        default:
            return refuse("the token's algorithm is not accepted (HS256 with the broker's secret, RS256 or ES256 with a known key)")
        }
        let signingInput = token.utf8.prefix(parts[0].count + 1 + parts[1].count)
        guard (try? hmac.verify(signature, signs: Array(signingInput))) == true else { return refuse("the token's signature is not valid") }
        let claims: Claims
        switch Self.claims(payloadData) {
        case .success(let read): claims = read
        case .failure(let error): return .failure(error)
        }
        if claims.strings["typ"] == WatchTokenClaims.type { return refuse("a watch link is not a client token; it can only watch its donation") }
        guard let expiresAt = claims.expiresAt else { return refuse("the token has no exp claim; tokens must expire") }
        guard expiresAt + TokenVerifier.leewaySeconds > now else { return refuse("the token has expired") }
        if let notBefore = claims.notBefore, notBefore - TokenVerifier.leewaySeconds > now { return refuse("the token is not valid yet (nbf)") }
        if let audience, !claims.audiences.contains(audience) { return refuse("the token is not meant for this broker (aud)") }
        if let issuer, claims.issuer != issuer { return refuse("the token was issued by an issuer the broker does not accept (iss)") }
        guard let raw = claims.strings[identityClaim] else { return refuse("the token has no \(identityClaim) claim to identify the caller") }
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
}
