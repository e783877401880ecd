import BrokerProtocol
import Foundation
import HTTPTypes
import JWTKit
import XCTest

@testable import BrokerAuth
@testable import BrokerTestSupport
@testable import LocationBroker

/// RFC 7515 section 4.1.11: a token whose header names critical extensions (`crit`) the reader does not understand
/// must be refused. The broker understands none, so every `crit` is refused, with a reason that says so, whether
/// the signature is good or not: an extension such as `b64: false` changes what the signature covers.
final class CriticalHeaderTests: XCTestCase {
    private static let upgrade: HTTPFields = [
        .connection: "Upgrade", .upgrade: "websocket", .secWebSocketVersion: "13", .secWebSocketKey: "dGhlIHNhbXBsZSBub25jZQ==",
    ]

    /// A client token for `identity`, validly signed with the broker's secret, whose header carries `fields`.
    private func token(header fields: [String: JWTHeaderField], key: HMACKey = HMACKey(from: Data(LiveBroker.jwtSecret.utf8))) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: key, digestAlgorithm: .sha256)
        var header = JWTHeader()
        for (name, value) in fields { header.fields[name] = value }
        let now = Int64(Date().timeIntervalSince1970)
        return try await keys.sign(TokenClaims(expiresAt: now + 3600, strings: ["sub": "donor@example.org"]), header: header)
    }

    func testAClientTokenWithACriticalExtensionIsRefusedWithItsReason() async throws {
        let live = try await startBroker()
        let verifier = try await TokenVerifier(configuration: live.broker.configuration)
        let cases: [(String, [String: JWTHeaderField], String)] = [
            ("an unknown extension", ["crit": .array([.string("urn:example:x")]), "urn:example:x": .string("1")],
             "the token's header lists critical extensions this broker does not understand (crit: urn:example:x)"),
            ("unencoded payload (RFC 7797)", ["b64": .bool(false), "crit": .array([.string("b64")])],
             "the token's header lists critical extensions this broker does not understand (crit: b64)"),
            ("an empty list", ["crit": .array([])],
             "the token's header has a crit member that is not a list of extension names; this broker understands no critical extension"),
            ("not a list", ["crit": .string("b64")],
             "the token's header has a crit member that is not a list of extension names; this broker understands no critical extension"),
        ]
        for (name, fields, reason) in cases {
            let critical = try await token(header: fields)
            XCTAssertEqual(verifier.verify(critical), .failure(BrokerError(.unauthorized, reason)), name)
            var headers = Self.upgrade
            headers[.authorization] = "Bearer \(critical)"
            let response = try await live.request(.get, "/v1/ws", headers: headers)
            XCTAssertEqual(response.status, .unauthorized, name)
            XCTAssertEqual(response.error, BrokerError(.unauthorized, reason), name)
        }
        // The same token without `crit` is a good one: the refusal is for the extension alone.
        let plain = try await token(header: ["b64": .bool(true)])
        guard case .success = verifier.verify(plain) else { return XCTFail("a token without crit was refused") }
    }

    func testAWatchLinkWithACriticalExtensionIsRefused() async throws {
        let live = try await startBroker()
        try await live.put("d-1", donor: "donor@example.org", volunteer: "vol@example.org", state: .beingLookedFor)
        let watchable = try await live.broker.donations.watchable(id: "d-1")
        let stored = try XCTUnwrap(watchable)
        let verifier = await WatchTokenVerifier(backendKey: LiveBroker.backendKey, ttlSeconds: 3600) { _ in stored }
        let (link, _) = try await verifier.mint(for: stored)
        guard case .success = await verifier.verify(link) else { return XCTFail("the plain link was refused") }
        // The link's own claims, re-signed under the watch-link key with a critical extension in its header.
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(key: WatchTokenVerifier.signingKey(backendKey: LiveBroker.backendKey)), digestAlgorithm: .sha256)
        let claims = try await keys.verify(link, as: WatchTokenClaims.self)
        var header = JWTHeader()
        header.typ = WatchTokenClaims.headerType
        header.crit = ["urn:example:x"]
        let critical = try await keys.sign(claims, header: header)
        let refused = await verifier.verify(critical)
        XCTAssertEqual(
            refused, .failure(BrokerError(.unauthorized, "the token's header lists critical extensions this broker does not understand (crit: urn:example:x)")))
    }
}
