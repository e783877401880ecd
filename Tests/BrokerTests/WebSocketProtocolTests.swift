import BrokerProtocol
import Foundation
import XCTest

@testable import LocationBroker

/// The WebSocket protocol as the broker's own handler speaks it, seen from a bare socket: heartbeats, close
/// handshakes in both directions, and the framing rules a client must follow.
final class WebSocketProtocolTests: XCTestCase {
    private static let welcome: UInt8 = 0x1, close: UInt8 = 0x8, ping: UInt8 = 0x9, pong: UInt8 = 0xA

    /// A bare socket for `identity`, past its `welcome`.
    private func welcomed(_ identity: String, on live: LiveBroker) async throws -> RawWebSocket {
        let socket = try RawWebSocket(port: live.port, token: try await LiveBroker.token(identity))
        XCTAssertEqual(try socket.readFrame()?.opcode, Self.welcome)
        return socket
    }

    private func waitUntilNoConnection(_ live: LiveBroker) async throws {
        try await waitUntil("the broker has forgotten the connection") { live.broker.hub.connectionCount == 0 }
    }

    func testAClientThatNeverAnswersAPingIsClosedAtTheNextHeartbeat() async throws {
        let live = try await LiveBroker.start { $0.heartbeatSeconds = 1 }
        let silent = try await welcomed("silent@example.org", on: live)
        XCTAssertEqual(try silent.readFrame(timeout: .seconds(3))?.opcode, Self.ping)
        let closing = try XCTUnwrap(try silent.readFrame(timeout: .seconds(3))?.close)
        XCTAssertEqual(closing.code, 1001)
        XCTAssertEqual(closing.reason, "Ping timeout")
        XCTAssertTrue(try silent.serverClosed())
        try await waitUntilNoConnection(live)
    }

    func testAClientThatAnswersPingsStaysConnected() async throws {
        let live = try await LiveBroker.start { $0.heartbeatSeconds = 1 }
        let donor = try await welcomed("donor@example.org", on: live)
        for _ in 0..<3 {
            let ping = try XCTUnwrap(try donor.readFrame(timeout: .seconds(3)))
            XCTAssertEqual(ping.opcode, Self.ping)
            try donor.sendFrame(opcode: Self.pong, ping.payload)
        }
        // Still served: a subscription to an unknown donation is answered, not ignored.
        try donor.sendText(#"{"type":"subscribe","id":"s1","donation":"d-404"}"#)
        var answer = try XCTUnwrap(try donor.readFrame())
        while answer.opcode == Self.ping { answer = try XCTUnwrap(try donor.readFrame()) }
        XCTAssertTrue(String(decoding: answer.payload, as: UTF8.self).contains(#""re":"s1""#))
        XCTAssertEqual(live.broker.hub.connectionCount, 1)
    }

    func testTheBrokerAnswersAPingWithTheSamePayload() async throws {
        let live = try await LiveBroker.start()
        let donor = try await welcomed("donor@example.org", on: live)
        try donor.sendFrame(opcode: Self.ping, [1, 2, 3])
        XCTAssertEqual(try donor.readFrame(), RawWebSocket.Frame(opcode: Self.pong, payload: [1, 2, 3]))
    }

    func testAClientsCloseIsEchoedWithItsCodeAndTheSocketClosed() async throws {
        let live = try await LiveBroker.start()
        let donor = try await welcomed("donor@example.org", on: live)
        try donor.sendClose(code: 4321)
        XCTAssertEqual(try donor.readFrame()?.close?.code, 4321)
        XCTAssertTrue(try donor.serverClosed())
        try await waitUntilNoConnection(live)
    }

    func testACloseCodeFromTheRegistryBeyondRFC6455IsEchoedToo() async throws {
        let live = try await LiveBroker.start()
        let donor = try await welcomed("donor@example.org", on: live)
        // 1012 (service restart) was registered with IANA after RFC 6455; a peer may send it.
        try donor.sendClose(code: 1012)
        XCTAssertEqual(try donor.readFrame()?.close?.code, 1012)
        XCTAssertTrue(try donor.serverClosed())
    }

    func testACloseCodeAClientMayNotSendIsAnsweredWith1002() async throws {
        let live = try await LiveBroker.start()
        let donor = try await welcomed("donor@example.org", on: live)
        // 1006 means "closed without a close frame" and must never be sent in one.
        try donor.sendClose(code: 1006)
        XCTAssertEqual(try donor.readFrame()?.close?.code, 1002)
        XCTAssertTrue(try donor.serverClosed())
    }

    func testAnUnmaskedFrameFromAClientClosesTheConnectionWith1002() async throws {
        let live = try await LiveBroker.start()
        let careless = try await welcomed("careless@example.org", on: live)
        try careless.sendFrame(opcode: 0x1, Array(#"{"type":"unsubscribe","channel":"a@x.org"}"#.utf8), masked: false)
        let closing = try XCTUnwrap(try careless.readFrame()?.close)
        XCTAssertEqual(closing.code, 1002)
        XCTAssertEqual(closing.reason, "client frames must be masked")
        try careless.sendClose(code: 1002)
        XCTAssertTrue(try careless.serverClosed())
    }

    func testABrokerCloseIsFinishedWhenTheClientAnswers() async throws {
        let live = try await LiveBroker.start()
        let donor = try await welcomed("donor@example.org", on: live)
        live.broker.hub.closeAll(code: 1001, reason: "server shutting down")
        let started = ContinuousClock.now
        XCTAssertEqual(try donor.readFrame()?.close?.code, 1001)
        try donor.sendClose(code: 1001)
        XCTAssertTrue(try donor.serverClosed())
        // Closed on the answer, not by the two-second cut that awaits clients that never answer.
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(1))
    }
}
