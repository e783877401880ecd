import BrokerProtocol
import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// The WebSocket protocol end to end, through the real upgrade and a bare socket: one real heartbeat, the close
/// echo, pings, and masking. The transport's timing and every framing rule are tested on an `EmbeddedChannel`
/// with virtual time in ``WebSocketTransportTests``.
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
}
