import NIOCore
import NIOWebSocket
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import BrokerWebSocket

/// The connection handler reads the client's frames itself (``ClientFrameAssembler``): masking, fragments and
/// their limits, and the frames NIO's decoder cannot read, which NIO's own handlers did before. Each test tries
/// to get past one of those rules on a served socket (``EmbeddedWebSocket``).
final class ClientFrameAssemblyTests: XCTestCase {
    private typealias Socket = EmbeddedWebSocket
    private static let invalidFrames = #"broker_frames_in_total{type="invalid"}"#
    /// A subscription to a donation that does not exist: answered with an error that names `s1`.
    private let unknownDonation = #"{"type":"subscribe","id":"s1","donation":"d-404"}"#

    /// A served socket past its welcome.
    private func welcomed(maxMessageBytes: Int = 4096) throws -> Socket {
        let socket = try Socket(maxMessageBytes: maxMessageBytes)
        XCTAssertEqual(try socket.frames().count, 1, "the welcome")
        return socket
    }

    private func closes(_ frames: [Socket.Frame]) -> [(code: UInt16?, reason: String)] {
        frames.compactMap(\.close)
    }

    func testAFloodOfFragmentsIsClosedOnceWith1009AndNothingOfItIsKept() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        try socket.sendText("[", fin: false)
        // Far more fragments than a message may have, each of them tiny.
        for _ in 0..<500 { try socket.send(Socket.continuation, fin: false, [0x20]) }
        let closes = closes(try socket.framesAfterWelcome())
        XCTAssertEqual(closes.count, 1, "one close frame: \(closes)")
        XCTAssertEqual(closes.first?.code, 1009)
        XCTAssertEqual(closes.first?.reason, "message in too many fragments")
        XCTAssertGreaterThanOrEqual(socket.metric( Self.invalidFrames) ?? 0, 1, "counted")
        // The client never answers the close: cut at the end of the grace, as for any refusal.
        socket.advance(by: WebSocketConnectionStateMachine.closeGrace)
        XCTAssertFalse(socket.isOpen)
    }

    func testTheFragmentThatWouldMakeA65thIsRefusedWith1009() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        // 63 fragments that are not the last: the 64th, the last one allowed, may still come.
        try socket.sendText("[", fin: false)
        for _ in 1..<(WebSocketConnectionHandler.maxFragments - 1) { try socket.send(Socket.continuation, fin: false, [0x20]) }
        XCTAssertEqual(try socket.framesAfterWelcome(), [], "63 fragments are not refused")
        // A 64th that is not the last promises a 65th.
        try socket.send(Socket.continuation, fin: false, [0x20])
        let closes = closes(try socket.framesAfterWelcome())
        XCTAssertEqual(closes.map(\.code), [1009])
        XCTAssertEqual(closes.first?.reason, "message in too many fragments")
        XCTAssertEqual(socket.metric( Self.invalidFrames), 1, "counted once")
    }

    func testAMessageAtTheSizeLimitIsServedAndOneByteOverIsRefusedWith1009() throws {
        let limit = 4096
        // Two fragments (a frame itself may be as long as the limit), padded with spaces (valid JSON).
        func fragments(_ total: Int) -> [[UInt8]] {
            let message = Array((unknownDonation + String(repeating: " ", count: total - unknownDonation.utf8.count)).utf8)
            return [Array(message[..<(total / 2)]), Array(message[(total / 2)...])]
        }
        let atLimit = try welcomed(maxMessageBytes: limit)
        defer { atLimit.stop() }
        let served = fragments(limit)
        try atLimit.send(Socket.text, fin: false, served[0])
        try atLimit.send(Socket.continuation, fin: true, served[1])
        XCTAssertTrue(try atLimit.framesAfterWelcome().contains { $0.text.contains(#""re":"s1""#) }, "a message of exactly the limit is read")
        XCTAssertTrue(atLimit.isOpen)

        let over = try welcomed(maxMessageBytes: limit)
        defer { over.stop() }
        let refused = fragments(limit + 1)
        try over.send(Socket.text, fin: false, refused[0])
        try over.send(Socket.continuation, fin: true, refused[1])
        let closes = closes(try over.framesAfterWelcome())
        XCTAssertEqual(closes.map(\.code), [1009])
        XCTAssertEqual(closes.first?.reason, "message too large")
        XCTAssertEqual(over.metric( Self.invalidFrames), 1, "counted once")
    }

    func testControlFramesBetweenFragmentsAreAnsweredAndTheMessageIsStillJoined() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        let message = Array(unknownDonation.utf8)
        try socket.send(Socket.text, fin: false, Array(message[..<10]))
        try socket.send(Socket.ping, Array("are you there".utf8))
        try socket.send(Socket.continuation, fin: false, Array(message[10..<20]))
        try socket.send(Socket.pong, [])
        try socket.send(Socket.continuation, fin: true, Array(message[20...]))
        let frames = try socket.framesAfterWelcome()
        XCTAssertEqual(frames.first, .init(opcode: Socket.pong, payload: Array("are you there".utf8)), "the ping is answered at once")
        XCTAssertEqual(frames.count, 2, "\(frames)")
        XCTAssertTrue(frames.last?.text.contains(#""re":"s1""#) ?? false, "the three fragments make the message: \(frames)")
        XCTAssertEqual(socket.metric( Self.invalidFrames) ?? 0, 0)
    }

    func testAnUnmaskedContinuationIsRefusedAsUnmaskedWhetherOrNotAMessageWasStarted() throws {
        let cases: [(String, (Socket) throws -> Void)] = [
            ("with no message started", { try $0.send(Socket.continuation, Array("{}".utf8), masked: false) }),
            ("after a masked first fragment", { socket in
                try socket.sendText("{", fin: false)
                try socket.send(Socket.continuation, fin: false, [0x20], masked: false)
            }),
        ]
        for (name, hostile) in cases {
            let socket = try welcomed()
            defer { socket.stop() }
            try hostile(socket)
            let closes = closes(try socket.framesAfterWelcome())
            XCTAssertEqual(closes.map(\.code), [1002], name)
            XCTAssertEqual(closes.first?.reason, "client frames must be masked", name)
            XCTAssertEqual(socket.metric( Self.invalidFrames), 1, "\(name): counted once")
        }
    }

    func testAFrameNIOCannotReadIsAnsweredOnceWithItsCodeAloneThenTheSocketClosed() throws {
        // Each of NIO's decoder errors: a frame over the size limit, a fragmented control frame, a control frame
        // of more than 125 bytes.
        let cases: [(String, UInt8, Bool, Int, UInt16)] = [
            ("oversized frame", Socket.binary, true, 5_000, 1009),
            ("fragmented ping", Socket.ping, false, 3, 1002),
            ("ping of 126 bytes", Socket.ping, true, 126, 1002),
        ]
        for (name, opcode, fin, size, code) in cases {
            let socket = try welcomed()
            defer { socket.stop() }
            try socket.send(opcode, fin: fin, Array(repeating: 0x20, count: size))
            let frames = try socket.framesAfterWelcome()
            XCTAssertEqual(frames, [.init(opcode: Socket.close, payload: [UInt8(code >> 8), UInt8(code & 0xFF)])], name)
            XCTAssertFalse(socket.isOpen, "\(name): closed at once")
            XCTAssertEqual(socket.metric( Self.invalidFrames), 1, "\(name): counted once")
            XCTAssertEqual(socket.hub.connectionCount, 0, "\(name): the hub forgot the connection")
        }
    }
}
