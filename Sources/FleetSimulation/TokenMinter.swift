import Foundation
import JWTKit

/// Signs HS256 client tokens with the broker's shared secret (`LOCATION_BROKER_JWT_SECRET`), as the Ponte
/// backend would: `sub` is the identity and `exp` the end of the token's life.
public struct TokenMinter: Sendable {
    private struct Claims: JWTPayload {
        var sub: String
        var exp: Int64
        var iat: Int64

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private let keys: JWTKeyCollection

    /// The broker refuses secrets shorter than this, so the simulator does too.
    public static let minimumSecretBytes = 32

    /// A minter for `secret`.
    /// - Throws: ``SimulationError`` when the secret is shorter than the broker accepts.
    public init(secret: String) async throws {
        guard secret.utf8.count >= Self.minimumSecretBytes else {
            throw SimulationError(
                "the JWT secret is \(secret.utf8.count) bytes; the broker needs at least \(Self.minimumSecretBytes) (use the broker's LOCATION_BROKER_JWT_SECRET)")
        }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Data(secret.utf8)), digestAlgorithm: .sha256)
        self.keys = keys
    }

    /// A token for `identity` that expires `ttlSeconds` from `now` (seconds since the Unix epoch).
    public func token(identity: String, ttlSeconds: Int64, now: Int64 = Int64(Date().timeIntervalSince1970)) async throws -> String {
        try await keys.sign(Claims(sub: identity, exp: now + ttlSeconds, iat: now))
    }
}
