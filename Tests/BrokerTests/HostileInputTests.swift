import BrokerClient
import BrokerProtocol
import Foundation
import HTTPTypes
import NIOWebSocket
import JWTKit
import XCTest

@testable import BrokerAuth
@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker

/// Hostile input across the WebSocket and HTTP surfaces: each gets its documented answer, nothing crashes,
/// and a donor watching a volunteer at the same time notices nothing.
final class HostileInputTests: XCTestCase {
    /// What a hostile WebSocket frame must produce.
    enum Expected {
        /// An error frame with this code (and this `re`, when given).
        case error(ErrorCode, re: String? = nil)
        /// The connection is closed with this code.
        case close(Int)
        /// A normal reply of this type.
        case reply(String)
    }

    struct Case {
        let name: String
        let send: @Sendable (BrokerConnection) async throws -> Void
        let expected: Expected
    }

    static func text(_ name: String, _ text: String, _ expected: Expected) -> Case {
        Case(name: name, send: { try await $0.sendText(text) }, expected: expected)
    }

    static func frame(_ name: String, _ opcode: WebSocketOpcode, fin: Bool = true, _ bytes: [UInt8], _ expected: Expected) -> Case {
        Case(name: name, send: { try await $0.sendFrame(opcode: opcode, fin: fin, bytes: bytes) }, expected: expected)
    }

    static let positionJSON = #"{"lat":-34.6,"lon":-58.4,"timestamp":\#(WallClock.system.now())}"#
    static let deepNesting = String(repeating: "[", count: 1_000) + String(repeating: "]", count: 1_000)

    static let webSocketCases: [Case] = [
        text("plain text", "hello", .error(.badRequest)),
        text("truncated JSON", #"{"type":"publish""#, .error(.badRequest)),
        text("a JSON array", "[]", .error(.badRequest)),
        text("JSON null", "null", .error(.badRequest)),
        text("a bare number", "42", .error(.badRequest)),
        text("no type", #"{"id":"n1"}"#, .error(.badRequest, re: "n1")),
        text("type of the wrong type", #"{"type":7,"id":"t1"}"#, .error(.badRequest, re: "t1")),
        text("unknown type", #"{"type":"teleport","id":"u1"}"#, .error(.badRequest, re: "u1")),
        text("id of the wrong type", #"{"type":"subscribe","id":5,"channel":"a@x.org"}"#, .error(.badRequest)),
        text("id too long", #"{"type":"subscribe","id":"\#(String(repeating: "x", count: 65))","channel":"a@x.org"}"#, .error(.badRequest)),
        text("deep nesting", #"{"type":"subscribe","id":"d1","channel":"a@x.org","extra":\#(deepNesting)}"#, .error(.badRequest)),
        text("publish without a position", #"{"type":"publish","id":"p1"}"#, .error(.invalidPosition, re: "p1")),
        text("latitude as text", #"{"type":"publish","id":"p2","position":{"lat":"south","lon":1,"timestamp":1}}"#, .error(.invalidPosition, re: "p2")),
        text("latitude beyond any double", #"{"type":"publish","id":"p3","position":{"lat":1e999,"lon":1,"timestamp":1}}"#, .error(.badRequest, re: "p3")),
        text("latitude 91", #"{"type":"publish","id":"p4","position":{"lat":91,"lon":1,"timestamp":\#(WallClock.system.now())}}"#, .error(.invalidPosition, re: "p4")),
        text("longitude -181", #"{"type":"publish","id":"p5","position":{"lat":1,"lon":-181,"timestamp":\#(WallClock.system.now())}}"#, .error(.invalidPosition, re: "p5")),
        text("heading 360", #"{"type":"publish","id":"p6","position":{"lat":1,"lon":1,"heading":360,"timestamp":\#(WallClock.system.now())}}"#, .error(.invalidPosition)),
        text("negative speed", #"{"type":"publish","id":"p7","position":{"lat":1,"lon":1,"speed":-3,"timestamp":\#(WallClock.system.now())}}"#, .error(.invalidPosition)),
        text("negative accuracy", #"{"type":"publish","id":"p8","position":{"lat":1,"lon":1,"accuracy":-1,"timestamp":\#(WallClock.system.now())}}"#, .error(.invalidPosition)),
        text("timestamp a year ahead", #"{"type":"publish","id":"p9","position":{"lat":1,"lon":1,"timestamp":\#(WallClock.system.now() + 31_536_000_000)}}"#, .error(.invalidPosition)),
        text("negative timestamp", #"{"type":"publish","id":"p10","position":{"lat":1,"lon":1,"timestamp":-5}}"#, .error(.invalidPosition)),
        text("fractional timestamp", #"{"type":"publish","id":"p11","position":{"lat":1,"lon":1,"timestamp":1.5}}"#, .error(.invalidPosition)),
        text("huge timestamp", #"{"type":"publish","id":"p12","position":{"lat":1,"lon":1,"timestamp":1e300}}"#, .error(.invalidPosition)),
        text("publishing on someone else's channel", #"{"type":"publish","id":"p13","channel":"vol@example.org","position":\#(positionJSON)}"#, .error(.forbidden, re: "p13")),
        text("subscribe with no target", #"{"type":"subscribe","id":"s1"}"#, .error(.badRequest, re: "s1")),
        text("subscribe with both targets", #"{"type":"subscribe","id":"s2","channel":"a@x.org","donation":"d-1"}"#, .error(.badRequest, re: "s2")),
        text("channel with a space", #"{"type":"subscribe","id":"s3","channel":"vol @example.org"}"#, .error(.badRequest, re: "s3")),
        text("channel with a NUL", #"{"type":"subscribe","id":"s4","channel":"vol\u0000@example.org"}"#, .error(.badRequest, re: "s4")),
        text("channel of 300 characters", #"{"type":"subscribe","id":"s5","channel":"\#(String(repeating: "v", count: 300))@x.org"}"#, .error(.badRequest, re: "s5")),
        text("empty channel", #"{"type":"subscribe","id":"s6","channel":""}"#, .error(.badRequest, re: "s6")),
        text("channel in capitals (canonicalised, still not theirs)", #"{"type":"subscribe","id":"s7","channel":"VOL@EXAMPLE.ORG"}"#, .error(.forbidden, re: "s7")),
        text("unicode channel", #"{"type":"subscribe","id":"s8","channel":"vólunteer@exämple.org"}"#, .error(.forbidden, re: "s8")),
        text("quote injection in a channel", #"{"type":"subscribe","id":"s9","channel":"x'OR'1'='1@x.org"}"#, .error(.forbidden, re: "s9")),
        text("SQL in a donation id", #"{"type":"subscribe","id":"s10","donation":"d-1';DROP TABLE donation;--"}"#, .error(.badRequest, re: "s10")),
        text("path in a donation id", #"{"type":"subscribe","id":"s11","donation":"../../etc/passwd"}"#, .error(.badRequest, re: "s11")),
        text("negative since", #"{"type":"subscribe","id":"s12","channel":"a@x.org","since":-1}"#, .error(.badRequest, re: "s12")),
        text("since as text", #"{"type":"subscribe","id":"s13","channel":"a@x.org","since":"0"}"#, .error(.badRequest)),
        text("someone else's donation", #"{"type":"subscribe","id":"s14","donation":"d-1"}"#, .error(.notFound, re: "s14")),
        text("duplicated keys: the last one counts", #"{"type":"subscribe","id":"s15","donation":"d-1","donation":"d-404"}"#, .error(.notFound, re: "s15")),
        text("unsubscribe from nothing", #"{"type":"unsubscribe","id":"u2","channel":"a@x.org"}"#, .error(.notFound, re: "u2")),
        frame("binary frame", .binary, Array(#"{"type":"subscribe","channel":"a@x.org"}"#.utf8), .error(.badRequest)),
        Case(name: "a fragmented frame is reassembled", send: { connection in
            try await connection.sendFrame(opcode: .text, fin: false, bytes: Array(#"{"type":"unsubscribe","#.utf8))
            try await connection.sendFrame(opcode: .continuation, fin: true, bytes: Array(#""id":"f1","channel":"a@x.org"}"#.utf8))
        }, expected: .error(.notFound, re: "f1")),
        frame("invalid UTF-8", .text, [0x7B, 0xFF, 0xFE, 0x7D], .close(1007)),
        frame("a frame over the size limit", .text, Array(repeating: 0x20, count: 5_000), .close(1009)),
        frame("a fragmented ping", .ping, fin: false, [1, 2, 3], .close(1002)),
        frame("a continuation with nothing to continue", .continuation, Array("{}".utf8), .close(1002)),
        Case(name: "fragments that add up past the limit", send: { connection in
            try await connection.sendFrame(opcode: .text, fin: false, bytes: Array(repeating: 0x20, count: 2_000))
            for _ in 0..<2 { try await connection.sendFrame(opcode: .continuation, fin: false, bytes: Array(repeating: 0x20, count: 2_000)) }
        }, expected: .close(1009)),
    ]

    func testHostileFramesGetTheirDocumentedAnswerAndHarmNobody() async throws {
        XCTAssertGreaterThanOrEqual(Self.webSocketCases.count, 40)
        let live = try await startBroker {
            $0.publishRate = 1000
            $0.publishBurst = 1000
            $0.maxInvalidFramesPerMinute = 10_000
        }
        try await live.put("d-1", state: .beingLookedFor)
        let volunteer = try await live.connect("vol@example.org")
        let bystander = try await live.connect("donor@example.org")
        try await bystander.send(.subscribe(.init(target: .donation("d-1"))))
        guard case .subscribed = try await bystander.next() else { return XCTFail("bystander not subscribed") }
        _ = try await volunteer.publish(position(metresFromHome: 1_000))
        _ = try await bystander.next()  // presence
        _ = try await bystander.next()  // position

        var attacker = try await live.connect("mallory@example.org")
        for hostile in Self.webSocketCases {
            try await hostile.send(attacker)
            let event = await attacker.nextEvent()
            switch hostile.expected {
            case .error(let code, let re):
                guard case .frame(.error(let error), _) = event else {
                    XCTFail("\(hostile.name): expected \(code.rawValue), got \(String(describing: event))")
                    continue
                }
                XCTAssertEqual(error.code, code, "\(hostile.name): \(error.message)")
                if let re { XCTAssertEqual(error.re, re, hostile.name) }
                XCTAssertFalse(error.message.isEmpty, hostile.name)
            case .reply(let type):
                guard case .frame(let frame, _) = event else { return XCTFail("\(hostile.name): no reply") }
                XCTAssertEqual(frame.type, type, hostile.name)
            case .close(let code):
                guard case .closed(let closeCode, _) = event else {
                    XCTFail("\(hostile.name): expected close \(code), got \(String(describing: event))")
                    continue
                }
                XCTAssertEqual(closeCode, code, hostile.name)
                attacker = try await live.connect("mallory@example.org")
            }
            // The bystander still watches the volunteer, undisturbed.
            let fix = try await volunteer.publishKept(position(metresFromHome: 900))
            guard case .position(let update) = try await bystander.next() else { return XCTFail("\(hostile.name) disturbed the bystander") }
            XCTAssertEqual(update.position, fix, hostile.name)
        }
        let health = try await live.request(.get, "/healthz")
        XCTAssertEqual(health.status, .ok)
        XCTAssertGreaterThanOrEqual(live.metric(#"broker_rejections_total{code="bad-request"}"#) ?? 0, 20)
        try await live.stop()
    }

    func testAConnectionThatKeepsSendingGarbageIsClosedWith4009() async throws {
        let live = try await startBroker { $0.maxInvalidFramesPerMinute = 5 }
        let attacker = try await live.connect("mallory@example.org")
        for attempt in 0..<6 { try await attacker.sendText("garbage \(attempt)") }
        var errors = 0
        var closeCode: Int?
        while let event = await attacker.nextEvent() {
            if case .frame(.error, _) = event { errors += 1 }
            if case .closed(let code, _) = event {
                closeCode = code
                break
            }
        }
        XCTAssertEqual(errors, 5, "every invalid frame within the budget is answered; the one past it is not")
        XCTAssertEqual(closeCode, 4009)
        try await live.stop()
    }

    func testHostileBackendRequests() async throws {
        let live = try await startBroker()
        let good = LiveBroker.donationJSON(donor: "a@x.org", volunteer: nil, state: .created)
        let cases: [(String, HTTPRequest.Method, String, String?, HTTPResponse.Status, ErrorCode)] = [
            ("not JSON", .put, "/v1/donations/d-1", "<xml/>", .badRequest, .badRequest),
            ("a JSON array", .put, "/v1/donations/d-1", "[]", .badRequest, .badRequest),
            ("wrong types", .put, "/v1/donations/d-1", #"{"donor":1,"volunteer":null,"state":"CREATED","home":{"lat":1,"lon":1}}"#, .badRequest, .badRequest),
            ("latitude beyond any double", .put, "/v1/donations/d-1", #"{"donor":"a@x.org","volunteer":null,"state":"CREATED","home":{"lat":1e999,"lon":1}}"#, .badRequest, .badRequest),
            ("latitude 100", .put, "/v1/donations/d-1", #"{"donor":"a@x.org","volunteer":null,"state":"CREATED","home":{"lat":100,"lon":1}}"#, .badRequest, .badRequest),
            ("unknown state", .put, "/v1/donations/d-1", #"{"donor":"a@x.org","volunteer":null,"state":"STOLEN","home":{"lat":1,"lon":1}}"#, .badRequest, .badRequest),
            ("empty donor", .put, "/v1/donations/d-1", #"{"donor":"","volunteer":null,"state":"CREATED","home":{"lat":1,"lon":1}}"#, .badRequest, .badRequest),
            ("the donor carries it", .put, "/v1/donations/d-1", #"{"donor":"a@x.org","volunteer":"A@x.org","state":"CREATED","home":{"lat":1,"lon":1}}"#, .badRequest, .badRequest),
            ("a label of 1000 characters", .put, "/v1/donations/d-1", #"{"donor":"a@x.org","volunteer":null,"state":"CREATED","home":{"lat":1,"lon":1,"label":"\#(String(repeating: "l", count: 1_000))"}}"#, .badRequest, .badRequest),
            ("an id of 200 characters", .put, "/v1/donations/\(String(repeating: "i", count: 200))", good, .badRequest, .badRequest),
            ("a body of 70 KB", .put, "/v1/donations/d-1", String(repeating: " ", count: 70_000) + good, .contentTooLarge, .tooLarge),
            ("an unknown donation", .get, "/v1/donations/d-404", nil, .notFound, .notFound),
            ("deleting an unknown donation", .delete, "/v1/donations/d-404", nil, .notFound, .notFound),
        ]
        for (name, method, path, body, status, code) in cases {
            let response = try await live.backend(method, path, body: body)
            XCTAssertEqual(response.status, status, name)
            XCTAssertEqual(response.error?.code, code, name)
        }
        let health = try await live.request(.get, "/healthz")
        XCTAssertEqual(health.status, .ok)
        try await live.stop()
    }

    func testHostileTokens() async throws {
        let live = try await startBroker { $0.audience = "ponte" }
        func base64URL(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let future = Int64(Date().timeIntervalSince1970) + 3600
        let algNone = base64URL(#"{"alg":"none","typ":"JWT"}"#) + "." + base64URL(#"{"sub":"donor@example.org","exp":\#(future),"aud":"ponte"}"#) + "."
        let secret = LiveBroker.jwtSecret
        let cases: [(String, String, String)] = [
            ("alg none", algNone, "the token's algorithm is not accepted (HS256 with the broker's secret, RS256 or ES256 with a known key)"),
            ("wrong audience", try await TokenVerifier.mintHS256(secret: secret, identity: "donor@example.org", ttlSeconds: 600, audience: "someone-else"), "the token is not meant for this broker (aud)"),
            ("no audience", try await TokenVerifier.mintHS256(secret: secret, identity: "donor@example.org", ttlSeconds: 600), "the token is not meant for this broker (aud)"),
            ("expired", try await TokenVerifier.mintHS256(secret: secret, identity: "donor@example.org", ttlSeconds: -600, audience: "ponte"), "the token has expired"),
            ("right claims, wrong key", try await TokenVerifier.mintHS256(secret: "an-attacker-secret-0123456789-0123456789", identity: "donor@example.org", ttlSeconds: 600, audience: "ponte"), "the token's signature is not valid"),
            ("not yet valid", try await signed(TokenClaims(expiresAt: future, notBefore: future - 60, audiences: ["ponte"], strings: ["sub": "donor@example.org"])), "the token is not valid yet (nbf)"),
            ("no exp", try await signed(TokenClaims(expiresAt: nil, audiences: ["ponte"], strings: ["sub": "donor@example.org"])), "the token has no exp claim; tokens must expire"),
            ("no identity", try await signed(TokenClaims(expiresAt: future, audiences: ["ponte"], strings: ["email": "donor@example.org"])), "the token has no sub claim to identify the caller"),
            ("identity with a space", try await signed(TokenClaims(expiresAt: future, audiences: ["ponte"], strings: ["sub": "donor @example.org"])), "the token's sub claim is not a usable identity: it holds a space"),
            ("three dots", "a.b.c.d", "the token is not a well-formed JWT"),
        ]
        for (name, token, message) in cases {
            let response = try await live.request(.get, "/v1/ws", headers: [
                .connection: "Upgrade", .upgrade: "websocket", .secWebSocketVersion: "13", .secWebSocketKey: "dGhlIHNhbXBsZSBub25jZQ==",
                .authorization: "Bearer \(token)",
            ])
            XCTAssertEqual(response.status, .unauthorized, name)
            XCTAssertEqual(response.error?.message, message, name)
        }
        try await live.stop()
    }

    private func signed(_ claims: TokenClaims) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Data(LiveBroker.jwtSecret.utf8)), digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }
}
