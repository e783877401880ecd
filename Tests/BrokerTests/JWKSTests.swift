import BrokerClient
import BrokerProtocol
import Foundation
import HTTPTypes
import JWTKit
import XCTest

@testable import BrokerAuth
@testable import BrokerCore

#if canImport(Glibc)
import Glibc
@testable import BrokerTestSupport
@testable import LocationBroker
#endif

/// Tokens signed by an identity provider's rotating keys (Firebase's, say), served as a JWKS over HTTP by a
/// server in the test process: rotation without a restart, the provider down, tokens of another project, and
/// the rules on which key checks which token.
final class JWKSTests: XCTestCase {
    static let project = "ponte-test"

    /// A broker that trusts only the JWKS at `url` (no HS256 secret), for tokens of `project`, with refresh
    /// times short enough for a test.
    private func jwksBroker(url: URL? = nil, file: String? = nil, timing: JWKSTiming = fastTiming) -> (inout BrokerConfiguration) -> Void {
        { configuration in
            configuration.jwtSecret = nil
            configuration.jwksURL = url
            configuration.jwksFile = file
            configuration.identityClaim = "email"
            configuration.audience = Self.project
            configuration.issuer = "https://securetoken.google.com/\(Self.project)"
            configuration.jwksTiming = timing
        }
    }

    static let fastTiming = JWKSTiming(
        tick: .milliseconds(50), minimumMaxAge: .milliseconds(200), maximumMaxAge: .seconds(3600), defaultMaxAge: .seconds(300),
        unknownKeyInterval: .milliseconds(200), retryInterval: .milliseconds(200), fetchTimeout: .seconds(5))

    private func refusal(_ live: LiveBroker, _ token: String) async throws -> String? {
        let (status, error) = try await IdentityRefusalTests.upgradeRefusal(live, token)
        guard status == .unauthorized else { return nil }
        return error?.message
    }

    private func welcomed(_ live: LiveBroker, _ token: String) async -> String? {
        await IdentityRefusalTests.welcomedIdentity(live, token)
    }

    private func withJWKSServer(keys: [String], _ body: (JWKSServer) async throws -> Void) async throws {
        let server = try await JWKSServer.start(keys: keys)
        do {
            try await body(server)
        } catch {
            try? await server.stop()
            throw error
        }
        try await server.stop()
    }

    func testKeysRotateWithoutARestart() async throws {
        let old = try await TestSigningKey.es256(kid: "old")
        let new = try await TestSigningKey.es256(kid: "new")
        try await withJWKSServer(keys: [old.jwk]) { server in
            try await withLiveBroker(jwksBroker(url: server.url)) { live in
                let oldToken = try await old.sign(firebaseClaims(email: "Donor@example.org"))
                let before = await welcomed(live, oldToken)
                XCTAssertEqual(before, "donor@example.org")
                // The provider rotates: the new key in, the old one out.
                server.change { $0.keys = [new.jwk] }
                let newToken = try await new.sign(firebaseClaims(email: "donor@example.org"))
                try await waitUntil("the new key is accepted") { await welcomed(live, newToken) == "donor@example.org" }
                let afterRotation = try await refusal(live, oldToken)
                XCTAssertEqual(afterRotation, "the token was signed with a key the broker does not know", "the old key is gone")
                XCTAssertGreaterThanOrEqual(live.metric(#"broker_jwks_refreshes_total{result="ok"}"#) ?? 0, 2)
                XCTAssertEqual(live.metric("broker_jwks_keys"), 1)
            }
        }
    }

    func testTheLastGoodSetIsKeptWhenTheProviderIsDown() async throws {
        let key = try await TestSigningKey.es256(kid: "k1")
        let token = try await key.sign(firebaseClaims(email: "donor@example.org"))
        try await withJWKSServer(keys: [key.jwk]) { server in
            // A short max-age: the set is fetched again in the background, without any token asking for it.
            server.change { $0.cacheControl = "public, max-age=0, must-revalidate" }
            try await withLiveBroker(jwksBroker(url: server.url)) { live in
                try await waitUntil("the set is refreshed before it expires") { server.fetchCount >= 3 }
                // The provider answers garbage, then errors, then nothing at all.
                server.change { $0.keys = ["not a key"] }
                try await waitUntil("a refresh fails on a bad answer") { (live.metric(#"broker_jwks_refreshes_total{result="failed"}"#) ?? 0) >= 1 }
                server.change { $0.status = .internalServerError }
                let failedBefore = live.metric(#"broker_jwks_refreshes_total{result="failed"}"#) ?? 0
                try await waitUntil("a refresh fails on a 500") { (live.metric(#"broker_jwks_refreshes_total{result="failed"}"#) ?? 0) > failedBefore }
                try await server.stop()
                let failedWhileUp = live.metric(#"broker_jwks_refreshes_total{result="failed"}"#) ?? 0
                try await waitUntil("a refresh fails with the server down") {
                    (live.metric(#"broker_jwks_refreshes_total{result="failed"}"#) ?? 0) > failedWhileUp
                }
                let accepted = await welcomed(live, token)
                XCTAssertEqual(accepted, "donor@example.org", "the last good key set is still in force")
                XCTAssertEqual(live.metric("broker_jwks_keys"), 1)
            }
        }
    }

    func testATokenOfAnotherProjectIsRefused() async throws {
        let key = try await TestSigningKey.es256(kid: "shared")
        try await withJWKSServer(keys: [key.jwk]) { server in
            try await withLiveBroker(jwksBroker(url: server.url)) { live in
                // Firebase signs every project's tokens with the same keys: only aud and iss tell them apart.
                let otherProject = try await key.sign(firebaseClaims(project: "someone-elses-app", email: "donor@example.org"))
                let wrongAudience = try await refusal(live, otherProject)
                XCTAssertEqual(wrongAudience, "the token is not meant for this broker (aud)")
                var otherIssuer = firebaseClaims(email: "donor@example.org")
                otherIssuer.issuer = "https://securetoken.google.com/someone-elses-app"
                otherIssuer.strings["iss"] = otherIssuer.issuer
                let wrongIssuer = try await refusal(live, try await key.sign(otherIssuer))
                XCTAssertEqual(wrongIssuer, "the token was issued by an issuer the broker does not accept (iss)")
                let unverified = try await refusal(live, try await key.sign(firebaseClaims(email: "donor@example.org", verified: false)))
                XCTAssertEqual(unverified, "the token's email is not verified (email_verified must be true)")
                let hs256 = try await refusal(live, try await LiveBroker.token("donor@example.org"))
                XCTAssertEqual(hs256, "the token's algorithm HS256 is not accepted: this broker verifies RS256 or ES256 tokens from its JWKS")
                let ours = await welcomed(live, try await key.sign(firebaseClaims(email: "donor@example.org")))
                XCTAssertEqual(ours, "donor@example.org")
            }
        }
    }

    func testAnUnknownKidIsRefusedWithoutTryingAnotherKey() async throws {
        let first = try await TestSigningKey.es256(kid: "first")
        let second = try await TestSigningKey.es256(kid: "second")
        let file = try jwksFile([first.jwk, second.jwk])
        try await withLiveBroker(jwksBroker(file: file)) { live in
            let claims = firebaseClaims(email: "donor@example.org")
            // Signed by the first key, which the broker knows, but naming a key it does not know.
            let unknownKid = try await refusal(live, try await first.sign(claims, kid: "third"))
            XCTAssertEqual(unknownKid, "the token was signed with a key the broker does not know")
            // No kid with two keys in the set: the broker does not guess.
            let noKid = try await refusal(live, try await first.sign(claims, kid: .some(nil)))
            XCTAssertEqual(noKid, "the token was signed with a key the broker does not know")
            // Naming the other key of the set: checked with that key only.
            let otherKid = try await refusal(live, try await first.sign(claims, kid: "second"))
            XCTAssertEqual(otherKid, "the token's signature is not valid")
            let good = await welcomed(live, try await second.sign(claims))
            XCTAssertEqual(good, "donor@example.org")
        }
    }

    func testUnknownKidsDoNotMakeTheBrokerHammerTheProvider() async throws {
        let key = try await TestSigningKey.es256(kid: "k1")
        try await withJWKSServer(keys: [key.jwk]) { server in
            var timing = Self.fastTiming
            timing.unknownKeyInterval = .seconds(30)
            try await withLiveBroker(jwksBroker(url: server.url, timing: timing)) { live in
                for index in 0..<20 {
                    let token = try await key.sign(firebaseClaims(email: "donor@example.org"), kid: "made-up-\(index)")
                    let refused = try await refusal(live, token)
                    XCTAssertEqual(refused, "the token was signed with a key the broker does not know")
                }
                // Every wake-up of the refresher has had time to run: still the one fetch made at start.
                try await Task.sleep(for: .milliseconds(300))
                XCTAssertEqual(server.fetchCount, 1, "at most one fetch per 30 s for unknown kids")
            }
        }
    }

    func testAKeyWithoutAlgDoesNotTakeTheTokensAlgorithm() async throws {
        let (rs256, ps256, rs512) = try await TestSigningKey.rsa(kid: "rsa")
        let file = try jwksFile([rs256.jwk])
        try await withLiveBroker(jwksBroker(file: file)) { live in
            let claims = firebaseClaims(email: "donor@example.org")
            // The first token the broker sees asks for PS256 with the RSA key that has no alg: refused.
            let pss = try await refusal(live, try await ps256.sign(claims))
            XCTAssertEqual(pss, "the token's algorithm is not accepted (HS256 with the broker's secret, RS256 or ES256 with a known key)")
            let sha512 = try await refusal(live, try await rs512.sign(claims))
            XCTAssertEqual(sha512, "the token's algorithm is not accepted (HS256 with the broker's secret, RS256 or ES256 with a known key)")
            // The key is RS256, as its type says, whatever came first.
            let accepted = await welcomed(live, try await rs256.sign(claims))
            XCTAssertEqual(accepted, "donor@example.org")
        }
    }

    func testAJWKSFileIsReadAgainWhenItChanges() async throws {
        let first = try await TestSigningKey.es256(kid: "first")
        let added = try await TestSigningKey.es256(kid: "added", withAlg: false)
        let file = try jwksFile([first.jwk])
        try await withLiveBroker(jwksBroker(file: file)) { live in
            let token = try await added.sign(firebaseClaims(email: "donor@example.org"))
            let before = try await refusal(live, token)
            XCTAssertEqual(before, "the token was signed with a key the broker does not know")
            try Data(#"{"keys":[\#(first.jwk),\#(added.jwk)]}"#.utf8).write(to: URL(fileURLWithPath: file))
            try await waitUntil("the changed file is read") { await welcomed(live, token) == "donor@example.org" }
            XCTAssertEqual(live.metric("broker_jwks_keys"), 2, "a key without alg on P-256 is an ES256 key")
        }
    }

    func testSIGHUPReadsTheJWKSFileAgain() async throws {
        let before = try await TestSigningKey.es256(kid: "aaaa")
        let after = try await TestSigningKey.es256(kid: "bbbb")
        let file = try jwksFile([before.jwk])
        // A whole second, which every file system stores exactly.
        let modified = Date(timeIntervalSince1970: 1_700_000_000)
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: file)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("broker-sighup-\(UUID().uuidString)")
        let broker = try await startBrokerProcess(
            database: folder.appendingPathComponent("broker.sqlite").path,
            extraEnvironment: [
                "LOCATION_BROKER_JWKS_FILE": file, "LOCATION_BROKER_IDENTITY_CLAIM": "email", "LOCATION_BROKER_AUDIENCE": Self.project,
                "LOCATION_BROKER_ISSUER": "https://securetoken.google.com/\(Self.project)",
            ])
        func welcomed(_ token: String) async -> Bool {
            guard let connection = try? await BrokerConnection.connect(url: "ws://127.0.0.1:\(broker.port)/v1/ws", token: token, timeout: .seconds(5))
            else { return false }
            let frame = try? await connection.next()
            await connection.close()
            if case .welcome? = frame { return true }
            return false
        }
        let token = try await after.sign(firebaseClaims(email: "donor@example.org"))
        let accepted = await welcomed(token)
        XCTAssertFalse(accepted, "the new key is not in the file yet")
        // The same size and modification time: only SIGHUP can tell the broker that the file changed. Written
        // beside it and renamed over it, so the broker's once-a-second look never sees a half-written file, whose
        // size differs.
        let replacement = file + ".new"
        try Data(#"{"keys":[\#(after.jwk)]}"#.utf8).write(to: URL(fileURLWithPath: replacement))
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: replacement)
        XCTAssertEqual(rename(replacement, file), 0, "the new key file replaces the old one in one step")
        try await Task.sleep(for: .milliseconds(1500))
        let unchanged = await welcomed(token)
        XCTAssertFalse(unchanged, "an unchanged modification time and size do not make the broker read the file")
        broker.signal(SIGHUP)
        try await waitUntil("SIGHUP makes the broker read the file") { await welcomed(token) }
        let stillRunning = await broker.waitForExit(timeout: .milliseconds(100))
        XCTAssertNil(stillRunning, "SIGHUP does not end the broker")
        broker.signal(SIGTERM)
        _ = await broker.waitForExit(timeout: .seconds(15))
    }

    func testAJWKSWithNoUsableKeyStopsTheStart() async throws {
        let file = try jwksFile([#"{"kty":"oct","kid":"h","k":"c2VjcmV0","alg":"HS256"}"#, #"{"kty":"EC","crv":"P-384","kid":"p384","x":"AA","y":"AA"}"#])
        do {
            try await withLiveBroker(jwksBroker(file: file)) { _ in XCTFail("the broker started without a usable key") }
        } catch let error as ConfigurationError {
            XCTAssertEqual(
                error.description,
                "the JWKS from \(file) holds no usable key (RS256 or ES256 on P-256, each with a kid): key 0 (kid h): alg HS256 is not accepted (RS256 or ES256); key 1 (kid p384): kty EC on P-384 does not fit alg RS256 or ES256")
        }
    }

    /// A JWKS file holding `keys`.
    private func jwksFile(_ keys: [String]) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("jwks-\(UUID().uuidString).json")
        try Data(#"{"keys":[\#(keys.joined(separator: ","))]}"#.utf8).write(to: url)
        return url.path
    }
}

/// The claims of a Firebase ID token of `project` for `email`.
func firebaseClaims(
    project: String = JWKSTests.project, email: String, verified: Bool? = true, ttl: Int64 = 3600
) -> TokenClaims {
    let now = Int64(Date().timeIntervalSince1970)
    return TokenClaims(
        expiresAt: now + ttl, issuer: "https://securetoken.google.com/\(project)", audiences: [project],
        strings: ["email": email, "sub": "uid-\(email.hashValue)", "iss": "https://securetoken.google.com/\(project)"],
        booleans: verified.map { ["email_verified": $0] } ?? [:])
}
