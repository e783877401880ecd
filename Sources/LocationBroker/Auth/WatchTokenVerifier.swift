import BrokerCore
import BrokerProtocol
import Crypto
import Foundation
import JWTKit

/// Makes and checks watch tokens: the links a backend hands a donor to follow one donation
/// (`POST /v1/donations/{id}/watch-token`, docs/SECURITY.md "Watch links").
///
/// The broker signs them itself (HS256) with a key derived from the backend key by HKDF-SHA256, so every node of
/// a cluster makes and accepts the same tokens, and the client-token key (`jwt_secret` or the JWKS) never signs
/// or verifies one. A token names the donation and its incarnation; it opens a socket only while that very
/// donation (not one created later under the same id) exists and has not ended.
struct WatchTokenVerifier: Sendable {
    private let keys: JWTKeyCollection
    /// How long a new watch token lives, in seconds (`watch_token_ttl_seconds`).
    let ttlSeconds: Int64
    /// Reads a donation from the store; the store, not this node's memory, says whether it still exists.
    private let lookup: @Sendable (String) async throws -> Donation?

    /// - Parameters:
    ///   - backendKey: the key of the donations API, from which the signing key is derived.
    ///   - lookup: reads a donation from the store.
    init(backendKey: String, ttlSeconds: Int64, lookup: @escaping @Sendable (String) async throws -> Donation?) async {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(key: Self.signingKey(backendKey: backendKey)), digestAlgorithm: .sha256)
        self.keys = keys
        self.ttlSeconds = ttlSeconds
        self.lookup = lookup
    }

    /// The HS256 key of watch tokens: HKDF-SHA256 of the backend key, with a label of its own so it can never be
    /// the key of anything else.
    static func signingKey(backendKey: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(backendKey.utf8)), salt: Data("location-broker".utf8),
            info: Data("watch-token v1".utf8), outputByteCount: 32)
    }

    /// Signs a token for `donation`, which must carry its incarnation.
    /// - Returns: the token and when it expires, in seconds since the Unix epoch.
    func mint(for donation: Donation, now: Int64 = Int64(Date().timeIntervalSince1970)) async throws -> (token: String, expiresAt: Int64) {
        guard let incarnation = donation.incarnation else { throw WatchTokenError.noIncarnation }
        let claims = WatchTokenClaims(
            typ: WatchTokenClaims.type, aud: WatchTokenClaims.audience, sub: donation.donor, don: donation.id, inc: incarnation,
            iat: now, exp: now + ttlSeconds)
        var header = JWTHeader()
        header.typ = WatchTokenClaims.headerType
        return (try await keys.sign(claims, header: header), claims.exp)
    }

    /// Checks a watch token at time `now` (seconds since the Unix epoch): signature, type, audience, expiry, then
    /// that its donation still exists in the incarnation it names and has not ended.
    /// - Returns: the identity of the connection, scoped to the donation; or `unauthorized` saying what is
    ///   wrong (never echoing the token), or `unavailable` when the store cannot be read now.
    func verify(_ token: String, now: Int64 = Int64(Date().timeIntervalSince1970)) async -> Result<VerifiedIdentity, BrokerError> {
        func refuse(_ message: String) -> Result<VerifiedIdentity, BrokerError> { .failure(BrokerError(.unauthorized, message)) }
        guard !token.isEmpty, token.utf8.count <= 8192 else { return refuse("the token is empty or longer than 8192 bytes") }
        let claims: WatchTokenClaims
        do {
            claims = try await keys.verify(token, as: WatchTokenClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            return refuse("the watch link's signature is not valid")
        } catch {
            return refuse("the watch link is not a token this broker made")
        }
        guard claims.typ == WatchTokenClaims.type, claims.aud == WatchTokenClaims.audience else {
            return refuse("the watch link is not a token this broker made")
        }
        guard claims.exp + TokenVerifier.leewaySeconds > now else { return refuse("the watch link has expired; ask for a new one") }
        guard DonationID.isValid(claims.don), let donor = Identity.canonical(claims.sub), !claims.inc.isEmpty else {
            return refuse("the watch link is not a token this broker made")
        }
        let donation: Donation?
        do {
            donation = try await lookup(claims.don)
        } catch {
            return .failure(BrokerError(.unavailable, "the broker cannot check this watch link now; retry shortly"))
        }
        guard let donation, !donation.state.isTerminal, donation.incarnation == claims.inc, donation.donor == donor else {
            return refuse("this watch link no longer opens anything: the donation it was made for has ended")
        }
        return .success(
            VerifiedIdentity(
                identity: WatchScope.identity(for: claims.don), expiresAt: claims.exp,
                watch: WatchScope(donation: claims.don, incarnation: claims.inc, donor: donor)))
    }
}

/// A watch token could not be made.
enum WatchTokenError: Error {
    /// The donation has no incarnation to bind the token to (``DonationService/watchable(id:)`` gives it one).
    case noIncarnation
}
