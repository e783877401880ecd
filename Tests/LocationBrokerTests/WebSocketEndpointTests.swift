import BrokerProtocol
import HTTPTypes
import Logging
import XCTest

@testable import BrokerAuth
@testable import BrokerCore
@testable import BrokerWebSocket
@testable import LocationBroker

/// `GET /v1/ws`: where an upgrade's token is read; an upgrade the upgrade handler refused is answered with the
/// reason it was decided with; a plain request that reached the route is told why it was not upgraded.
final class WebSocketEndpointTests: XCTestCase {
    static let secret = "endpoint-test-secret-0123456789-0123456789"

    func testARefusalIsAnsweredWithItsReasonAndCountedAndAPlainRequestIsToldWhy() async throws {
        let metrics = BrokerMetrics()
        var configuration = BrokerConfiguration()
        configuration.jwtSecret = Self.secret
        configuration.maxConnectionsPerIdentity = 1
        let hub = Hub(settings: HubSettings(configuration), metrics: metrics, clock: WallClock.system, framing: TextFrame.framing)
        let endpoint = WebSocketEndpoint(
            verifier: try await TokenVerifier(configuration: configuration),
            watchLinks: await WatchTokenVerifier(backendKey: "endpoint-test-backend-key-0123456789", ttlSeconds: 600) { _ in nil },
            metrics: metrics, hub: hub, isDraining: { false })
        let token = try await TokenVerifier.mintHS256(secret: Self.secret, identity: "donor@example.org", ttlSeconds: 600)
        let request = HTTPRequest(method: .get, scheme: nil, authority: "broker", path: "/v1/ws", headerFields: [.authorization: "Bearer \(token)"])

        // The donor already has its one connection: the upgrade is refused for that.
        let outbox = Outbox(limit: hub.settings.outboxBytes, stallLimit: hub.settings.slowConsumerStall)
        let open = hub.connect(identity: "donor@example.org", expiresAt: .max, sink: outbox, logger: Logger(label: "test"))
        guard case .now(.failure(let refusal)) = endpoint.authorize(request, from: nil) else { return XCTFail("the second connection was not refused") }
        XCTAssertEqual(refusal.status, .tooManyRequests)
        var body = endpoint.answer(refusal)
        let text = try XCTUnwrap(body.readString(length: body.readableBytes))
        XCTAssertTrue(text.contains(#""code":"limit-reached""#) && text.contains("already has 1 open connections"), text)
        XCTAssertEqual(metrics.value(of: #"broker_rejections_total{code="limit-reached"}"#), 1, "the refusal is counted")
        hub.disconnect(open)
        // A plain GET /v1/ws with a valid token is judged when it reaches the route: it is not an upgrade.
        let (plainStatus, plainError) = await endpoint.refusal(for: request)
        XCTAssertEqual(plainStatus, .badRequest)
        XCTAssertEqual(plainError.code, .badRequest)
        XCTAssertTrue(plainError.message.hasPrefix("this endpoint speaks WebSocket only"), plainError.message)
    }

    func testEveryRefusalOfTheDecisionSaysWhy() async throws {
        let metrics = BrokerMetrics()
        var configuration = BrokerConfiguration()
        configuration.jwtSecret = Self.secret
        let hub = Hub(settings: HubSettings(configuration), metrics: metrics, clock: WallClock.system, framing: TextFrame.framing)
        let draining = DrainFlag()
        let endpoint = WebSocketEndpoint(
            verifier: try await TokenVerifier(configuration: configuration),
            watchLinks: await WatchTokenVerifier(backendKey: "endpoint-test-backend-key-0123456789", ttlSeconds: 600) { _ in nil },
            metrics: metrics, hub: hub, isDraining: { draining.isSet })
        func decided(_ headers: HTTPFields) -> UpgradeRefusal? {
            let request = HTTPRequest(method: .get, scheme: nil, authority: "broker", path: "/v1/ws", headerFields: headers)
            guard case .now(.failure(let refusal)) = endpoint.authorize(request, from: nil) else { return nil }
            return refusal
        }
        XCTAssertEqual(decided([:])?.status, .unauthorized)
        XCTAssertEqual(decided([:])?.error.message.hasPrefix("no token"), true)
        let forged = try await TokenVerifier.mintHS256(secret: "an-attacker-secret-0123456789-0123456789", identity: "donor@example.org", ttlSeconds: 600)
        XCTAssertEqual(decided([.authorization: "Bearer \(forged)"])?.error.code, .unauthorized)
        draining.start()
        let valid = try await TokenVerifier.mintHS256(secret: Self.secret, identity: "donor@example.org", ttlSeconds: 600)
        XCTAssertEqual(decided([.authorization: "Bearer \(valid)"])?.status, .serviceUnavailable)
    }

    /// The token of an upgrade as the hand-written reader hands it over: from `Authorization: Bearer` or, for
    /// browsers, from `?token=`.
    func testTheTokenIsTheBearerCredentialOrTheQuerysToken() throws {
        func token(_ requestLine: String, _ headers: [String]) throws -> String? {
            let lines = [requestLine, "Host: broker", "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="] + headers
            let head = try XCTUnwrap(UpgradeRequestHead.parse(Array(lines.joined(separator: "\r\n").utf8)), requestLine)
            return WebSocketEndpoint.token(of: head.request)
        }
        XCTAssertEqual(try token("GET /v1/ws HTTP/1.1", ["Authorization: Bearer a.b.c"]), "a.b.c")
        XCTAssertEqual(try token("GET /v1/ws?token=a.b.c HTTP/1.1", []), "a.b.c")
        XCTAssertEqual(try token("GET /v1/ws?token=q.q.q HTTP/1.1", ["Authorization: Bearer h.h.h"]), "h.h.h", "the header first")
        XCTAssertNil(try token("GET /v1/ws HTTP/1.1", []))
    }
}
