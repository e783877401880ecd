import BrokerClient
import BrokerProtocol
import Foundation
import HTTPTypes
import JWTKit
import XCTest

@testable import BrokerAuth
@testable import BrokerTestSupport
@testable import LocationBroker

/// A token's identity is refused at the upgrade when it could be confused with another person's; a donation's
/// donor and volunteer follow the same rules, so the two always compare equal; an unverified e-mail is no identity.
final class IdentityRefusalTests: XCTestCase {
    static let upgrade: HTTPFields = [
        .connection: "Upgrade", .upgrade: "websocket", .secWebSocketVersion: "13", .secWebSocketKey: "dGhlIHNhbXBsZSBub25jZQ==",
    ]

    /// The status and error of an upgrade request with `token`.
    static func upgradeRefusal(_ live: LiveBroker, _ token: String) async throws -> (HTTPResponse.Status, BrokerError?) {
        var headers = upgrade
        headers[.authorization] = "Bearer \(token)"
        let response = try await live.request(.get, "/v1/ws", headers: headers)
        return (response.status, response.error)
    }

    /// The identity the broker welcomes `token` as, or `nil` when the upgrade fails.
    static func welcomedIdentity(_ live: LiveBroker, _ token: String) async -> String? {
        guard let connection = try? await BrokerConnection.connect(url: live.webSocketURL, token: token, timeout: .seconds(5)) else { return nil }
        let frame = try? await connection.next()
        await connection.close()
        guard case .welcome(let welcome)? = frame else { return nil }
        return welcome.identity
    }

    func testAKelvinSignIdentityIsRefusedAtTheUpgrade() async throws {
        try await withLiveBroker { live in
            try await live.put("d-kim", donor: "kim@x.org", volunteer: "vol@example.org", state: .beingLookedFor)
            let kelvin = try await LiveBroker.token("\u{212A}im@x.org")
            let (status, error) = try await Self.upgradeRefusal(live, kelvin)
            XCTAssertEqual(status, .unauthorized)
            XCTAssertEqual(
                error,
                BrokerError(
                    .unauthorized,
                    "the token's sub claim is not a usable identity: it holds U+212A, a look-alike that compatibility or case mapping turns into ASCII; write the ASCII letters instead"))
            let welcomed = await Self.welcomedIdentity(live, kelvin)
            XCTAssertNil(welcomed, "no socket for the Kelvin sign, so it never reaches kim@x.org's donation")
            let kim = await Self.welcomedIdentity(live, try await LiveBroker.token("Kim@x.org"))
            XCTAssertEqual(kim, "kim@x.org", "the real Kim, any ASCII case, is welcome")
        }
    }

    func testInvisibleCharactersInAnIdentityAreRefusedAtTheUpgrade() async throws {
        try await withLiveBroker { live in
            for (raw, scalar) in [("ki\u{200D}m@x.org", "U+200D"), ("kim\u{FE0F}@x.org", "U+FE0F"), ("\u{3164}kim@x.org", "U+3164")] {
                let token = try await LiveBroker.token(raw)
                let (status, error) = try await Self.upgradeRefusal(live, token)
                XCTAssertEqual(status, .unauthorized, scalar)
                XCTAssertEqual(error?.message, "the token's sub claim is not a usable identity: it holds the invisible or control character \(scalar)", scalar)
                let welcomed = await Self.welcomedIdentity(live, token)
                XCTAssertNil(welcomed, scalar)
            }
            let decomposed = try await Self.upgradeRefusal(live, try await LiveBroker.token("Jose\u{0301}@x.org"))
            XCTAssertEqual(
                decomposed.1?.message,
                "the token's sub claim is not a usable identity: it is not in Unicode normalization form C (NFC); send the composed form of each accented letter")
            XCTAssertEqual(live.metric(#"broker_rejections_total{code="unauthorized"}"#), 7, "each refused upgrade and socket is counted")
        }
    }

    func testDonationIdentitiesAreCanonicalLikeTokens() async throws {
        try await withLiveBroker { live in
            let kelvin = try await live.backend(.put, "/v1/donations/d-1", body: LiveBroker.donationJSON(donor: "\u{212A}im@x.org", volunteer: nil, state: .created))
            XCTAssertEqual(kelvin.status, .badRequest)
            XCTAssertEqual(
                kelvin.error,
                BrokerError(.badRequest, "donor is not a usable identity: it holds U+212A, a look-alike that compatibility or case mapping turns into ASCII; write the ASCII letters instead"))
            let joiner = try await live.backend(
                .put, "/v1/donations/d-1", body: LiveBroker.donationJSON(donor: "kim@x.org", volunteer: "v\u{200D}ol@x.org", state: .beingLookedFor))
            XCTAssertEqual(joiner.status, .badRequest)
            XCTAssertEqual(joiner.error?.message, "volunteer must be null or a usable identity: it holds the invisible or control character U+200D")
            // The same person on both sides: the donor sent as Élodie@X.ORG watches with a token for Élodie@x.org.
            try await live.put("d-2", donor: "Élodie@X.ORG", volunteer: "vol@example.org", state: .beingLookedFor)
            let donor = try await BrokerConnection.connect(url: live.webSocketURL, token: try await LiveBroker.token("Élodie@x.org"))
            guard case .welcome(let welcome) = try await donor.next() else { return XCTFail("no welcome") }
            XCTAssertEqual(welcome.identity, "Élodie@x.org")
            try await donor.send(.subscribe(.init(id: "s", target: .donation("d-2"))))
            guard case .subscribed = try await donor.next() else { return XCTFail("the donor could not watch their donation") }
            await donor.close()
        }
    }

    func testAnUnverifiedEmailIsNoIdentity() async throws {
        func token(_ booleans: [String: Bool], strings: [String: String] = [:]) async throws -> String {
            let keys = JWTKeyCollection()
            await keys.add(hmac: HMACKey(from: Data(LiveBroker.jwtSecret.utf8)), digestAlgorithm: .sha256)
            return try await keys.sign(
                TokenClaims(
                    expiresAt: Int64(Date().timeIntervalSince1970) + 600, strings: ["email": "donor@example.org"].merging(strings) { $1 },
                    booleans: booleans))
        }
        try await withLiveBroker({ $0.identityClaim = "email" }) { live in
            let refusals: [(String, String)] = [
                ("email_verified false", try await token(["email_verified": false])),
                ("no email_verified", try await token([:])),
                ("email_verified as a string", try await token([:], strings: ["email_verified": "true"])),
            ]
            for (name, token) in refusals {
                let (status, error) = try await Self.upgradeRefusal(live, token)
                XCTAssertEqual(status, .unauthorized, name)
                XCTAssertEqual(error?.message, "the token's email is not verified (email_verified must be true)", name)
            }
            let verified = await Self.welcomedIdentity(live, try await token(["email_verified": true]))
            XCTAssertEqual(verified, "donor@example.org")
        }
        try await withLiveBroker({
            $0.identityClaim = "email"
            $0.requireEmailVerified = false
        }) { lenient in
            let unverified = await Self.welcomedIdentity(lenient, try await token([:]))
            XCTAssertEqual(unverified, "donor@example.org", "require_email_verified: false lets it through")
        }
    }
}
