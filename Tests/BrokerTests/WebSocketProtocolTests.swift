import BrokerProtocol
import Foundation
import XCTest

@testable import LocationBroker

/// The WebSocket protocol end to end, through the real upgrade and a bare socket: one real heartbeat, the close
/// echo, pings, and masking. The transport's timing and every framing rule are tested on an `EmbeddedChannel`
/// with virtual time in ``WebSocketTransportTests``.
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
}
