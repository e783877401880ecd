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
package struct WatchTokenVerifier: Sendable {
    private let keys: JWTKeyCollection
    /// The key of the donor digests the tokens carry instead of the donor's identity.
    private let donorKey: SymmetricKey
    /// How long a new watch token lives, in seconds (`watch_token_ttl_seconds`).
    let ttlSeconds: Int64
    /// Reads a donation from the store; the store, not this node's memory, says whether it still exists.
    private let lookup: @Sendable (String) async throws -> Donation?

    /// - Parameters:
    ///   - backendKey: the key of the donations API, from which the signing key is derived.
    ///   - lookup: reads a donation from the store.
    package init(backendKey: String, ttlSeconds: Int64, lookup: @escaping @Sendable (String) async throws -> Donation?) async {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(key: Self.signingKey(backendKey: backendKey)), digestAlgorithm: .sha256)
        self.keys = keys
        self.donorKey = Self.derivedKey(backendKey: backendKey, label: "watch-token donor v1")
        self.ttlSeconds = ttlSeconds
        self.lookup = lookup
    }

    /// The HS256 key of watch tokens: HKDF-SHA256 of the backend key, with a label of its own so it can never be
    /// the key of anything else.
    static func signingKey(backendKey: String) -> SymmetricKey {
        derivedKey(backendKey: backendKey, label: "watch-token v1")
    }

    /// A key of its own for each use, derived from the backend key (HKDF-SHA256).
    private static func derivedKey(backendKey: String, label: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(backendKey.utf8)), salt: Data("location-broker".utf8),
            info: Data(label.utf8), outputByteCount: 32)
    }

    /// How a token names its donor: HMAC-SHA256 of the donor's identity, the donation and its incarnation, under a
    /// key of the broker's, truncated to 128 bits, in hex. Without the key nobody can test a guessed e-mail
    /// against it, and two links of one donor share nothing that ties them together.
    func donorDigest(donor: String, donation: String, incarnation: String) -> String {
        // NUL separates the fields: none of them can hold one (identities and ids refuse control characters).
        let message = Data("\(donor)\u{0}\(donation)\u{0}\(incarnation)".utf8)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: donorKey)
        return mac.prefix(16).map { byte in String(byte >> 4, radix: 16) + String(byte & 0x0F, radix: 16) }.joined()
    }

    /// Signs a token for `donation`, which must carry its incarnation.
    /// - Returns: the token and when it expires, in seconds since the Unix epoch.
    package func mint(for donation: Donation, now: Int64 = Int64(Date().timeIntervalSince1970)) async throws -> (token: String, expiresAt: Int64) {
        guard let incarnation = donation.incarnation else { throw WatchTokenError.noIncarnation }
        let claims = WatchTokenClaims(
            typ: WatchTokenClaims.type, aud: WatchTokenClaims.audience,
            dnr: donorDigest(donor: donation.donor, donation: donation.id, incarnation: incarnation), don: donation.id, inc: incarnation,
            iat: now, exp: now + ttlSeconds)
        var header = JWTHeader()
        header.typ = WatchTokenClaims.headerType
        return (try await keys.sign(claims, header: header), claims.exp)
    }

    /// Checks a watch token at time `now` (seconds since the Unix epoch): signature, type, audience, expiry, then
    /// that its donation still exists in the incarnation it names and has not ended.
    /// - Returns: the identity of the connection, scoped to the donation; or `unauthorized` saying what is
    ///   wrong (never echoing the token), or `unavailable` when the store cannot be read now.
    package func verify(_ token: String, now: Int64 = Int64(Date().timeIntervalSince1970)) async -> Result<VerifiedIdentity, BrokerError> {
        func refuse(_ message: String) -> Result<VerifiedIdentity, BrokerError> { .failure(BrokerError(.unauthorized, message)) }
        guard !token.isEmpty, token.utf8.count <= 8192 else { return refuse("the token is empty or longer than 8192 bytes") }
        if case .success(let header)? = JOSEToken(token).header, let refusal = TokenVerifier.criticalExtensionRefusal(header) {
            return refuse(refusal)
        }
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
        guard DonationID.isValid(claims.don), !claims.dnr.isEmpty, !claims.inc.isEmpty else {
            return refuse("the watch link is not a token this broker made")
        }
        let donation: Donation?
        do {
            donation = try await lookup(claims.don)
        } catch {
            return .failure(BrokerError(.unavailable, "the broker cannot check this watch link now; retry shortly"))
        }
        let ended = "this watch link no longer opens anything: the donation it was made for has ended"
        guard let donation else {
            // Ended and removed, or made after the backup the broker's data was restored from: the broker cannot
            // tell which, and says both rather than "ended" for a donation that may be on its way.
            return refuse(
                "this watch link no longer opens anything: the broker has no record of its donation (it ended and was removed, or the broker's data was restored from an earlier backup); ask for a new link")
        }
        guard Self.constantTimeEqual(donorDigest(donor: donation.donor, donation: donation.id, incarnation: claims.inc), claims.dnr) else {
            return refuse(ended)
        }
        guard !donation.state.isTerminal else { return refuse(ended) }
        guard donation.incarnation == claims.inc else {
            // The same donor's donation under the same id, recorded anew since the link was made: created again
            // after it ended, or PUT again after a restore lost the record the link was made for.
            return refuse(
                "this watch link was made for an earlier record of this donation (it was created again, or the broker's data was restored from an earlier backup); ask for a new link")
        }
        return .success(
            VerifiedIdentity(
                identity: WatchScope.identity(for: claims.don), expiresAt: claims.exp,
                watch: WatchScope(donation: claims.don, incarnation: claims.inc, donor: donation.donor)))
    }
}

extension WatchTokenVerifier {
    /// Compares two digests in time that depends on their lengths only.
    fileprivate static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// A watch token could not be made.
package enum WatchTokenError: Error {
    /// The donation has no incarnation to bind the token to (``DonationService/watchable(id:)`` gives it one).
    case noIncarnation
}
