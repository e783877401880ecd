import BrokerProtocol
import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// The WebSocket protocol as the broker's own handler speaks it, seen from a bare socket: heartbeats, close
/// handshakes in both directions, and the framing rules a client must follow.
final class WebSocketProtocolTests: XCTestCase {
    private static let welcome: UInt8 = 0x1, close: UInt8 = 0x8, ping: UInt8 = 0x9, pong: UInt8 = 0xA

    /// A bare socket for `identity`, past its `welcome`.
    private func welcomed(_ identity: String, on live: LiveBroker) async throws -> RawWebSocket {
        let socket = try await RawWebSocket.connect(port: live.port, token: try await LiveBroker.token(identity))
        let welcome = try await socket.readFrame()
        XCTAssertEqual(welcome?.opcode, Self.welcome)
        return socket
    }

    private func waitUntilNoConnection(_ live: LiveBroker) async throws {
        try await waitUntil("the broker has forgotten the connection") { live.broker.hub.connectionCount == 0 }
    }

    func testAClientThatNeverAnswersAPingIsClosedAtTheNextHeartbeat() async throws {
        let live = try await startBroker { $0.heartbeatSeconds = 1 }
        let silent = try await welcomed("silent@example.org", on: live)
        let ping = try await silent.readFrame(timeout: .seconds(3))
        XCTAssertEqual(ping?.opcode, Self.ping)
        let second = try await silent.readFrame(timeout: .seconds(3))
        let closing = try XCTUnwrap(second?.close)
        XCTAssertEqual(closing.code, 1001)
        XCTAssertEqual(closing.reason, "Ping timeout")
        let closed = try await silent.serverClosed()
        XCTAssertTrue(closed)
        try await waitUntilNoConnection(live)
    }

    func testAClientThatAnswersPingsStaysConnected() async throws {
        let live = try await startBroker { $0.heartbeatSeconds = 1 }
        let donor = try await welcomed("donor@example.org", on: live)
        for _ in 0..<3 {
            let frame = try await donor.readFrame(timeout: .seconds(3))
            let ping = try XCTUnwrap(frame)
            XCTAssertEqual(ping.opcode, Self.ping)
            try await donor.sendFrame(opcode: Self.pong, ping.payload)
        }
        // Still served: a subscription to an unknown donation is answered, not ignored.
        try await donor.sendText(#"{"type":"subscribe","id":"s1","donation":"d-404"}"#)
        var frame = try await donor.readFrame()
        while frame?.opcode == Self.ping { frame = try await donor.readFrame() }
        let answer = try XCTUnwrap(frame)
        XCTAssertTrue(String(decoding: answer.payload, as: UTF8.self).contains(#""re":"s1""#))
        XCTAssertEqual(live.broker.hub.connectionCount, 1)
    }

    func testTheBrokerAnswersAPingWithTheSamePayload() async throws {
        let live = try await startBroker()
        let donor = try await welcomed("donor@example.org", on: live)
        try await donor.sendFrame(opcode: Self.ping, [1, 2, 3])
        let pong = try await donor.readFrame()
        XCTAssertEqual(pong, RawWebSocket.Frame(opcode: Self.pong, payload: [1, 2, 3]))
    }

    func testAClientsCloseIsEchoedWithItsCodeAndTheSocketClosed() async throws {
        let live = try await startBroker()
        let donor = try await welcomed("donor@example.org", on: live)
        try await donor.sendClose(code: 4321)
        let echo = try await donor.readFrame()
        XCTAssertEqual(echo?.close?.code, 4321)
        let closed = try await donor.serverClosed()
        XCTAssertTrue(closed)
        try await waitUntilNoConnection(live)
    }

    func testACloseCodeFromTheRegistryBeyondRFC6455IsEchoedToo() async throws {
        let live = try await startBroker()
        let donor = try await welcomed("donor@example.org", on: live)
        // 1012 (service restart) was registered with IANA after RFC 6455; a peer may send it.
        try await donor.sendClose(code: 1012)
        let echo = try await donor.readFrame()
        XCTAssertEqual(echo?.close?.code, 1012)
        let closed = try await donor.serverClosed()
        XCTAssertTrue(closed)
    }

    func testACloseCodeAClientMayNotSendIsAnsweredWith1002() async throws {
        let live = try await startBroker()
        let donor = try await welcomed("donor@example.org", on: live)
        // 1006 means "closed without a close frame" and must never be sent in one.
        try await donor.sendClose(code: 1006)
        let echo = try await donor.readFrame()
        XCTAssertEqual(echo?.close?.code, 1002)
        let closed = try await donor.serverClosed()
        XCTAssertTrue(closed)
    }

    func testAnUnmaskedFrameFromAClientClosesTheConnectionWith1002() async throws {
        let live = try await startBroker()
        let careless = try await welcomed("careless@example.org", on: live)
        try await careless.sendFrame(opcode: 0x1, Array(#"{"type":"unsubscribe","channel":"a@x.org"}"#.utf8), masked: false)
        let frame = try await careless.readFrame()
        let closing = try XCTUnwrap(frame?.close)
        XCTAssertEqual(closing.code, 1002)
        XCTAssertEqual(closing.reason, "client frames must be masked")
        try await careless.sendClose(code: 1002)
        let closed = try await careless.serverClosed()
        XCTAssertTrue(closed)
    }

    func testABrokerCloseIsFinishedWhenTheClientAnswers() async throws {
        let live = try await startBroker()
        let donor = try await welcomed("donor@example.org", on: live)
        live.broker.hub.closeAll(code: 1001, reason: "server shutting down")
        let started = ContinuousClock.now
        let closing = try await donor.readFrame()
        XCTAssertEqual(closing?.close?.code, 1001)
        try await donor.sendClose(code: 1001)
        let closed = try await donor.serverClosed()
        XCTAssertTrue(closed)
        // Closed on the answer, not by the two-second cut that awaits clients that never answer.
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(1))
    }
}
