import BrokerProtocol
import NIOCore
import NIOEmbedded
import NIOWebSocket
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import BrokerWebSocket

/// The broker's WebSocket transport on an `EmbeddedChannel` with virtual time: heartbeats, close handshakes in
/// both directions and the grace that cuts them, read gating, and the framing rules, each close with its
/// exact code and reason.
final class WebSocketTransportTests: XCTestCase {
    private typealias Socket = EmbeddedWebSocket
    private let unknownDonation = #"{"type":"subscribe","id":"s1","donation":"d-404"}"#

    /// The served socket, past its welcome frame.
    private func welcomed(_ make: () throws -> Socket = { try Socket() }) throws -> Socket {
        let socket = try make()
        let welcome = try socket.frames()
        XCTAssertEqual(welcome.count, 1)
        XCTAssertTrue(welcome.first?.text.contains(#""heartbeat":1"#) ?? false, "the welcome announces the heartbeat")
        return socket
    }

    /// The close frame among `frames`, asserting there is exactly one.
    private func onlyClose(_ frames: [Socket.Frame], file: StaticString = #filePath, line: UInt = #line) -> (code: UInt16?, reason: String)? {
        let closes = frames.compactMap(\.close)
        XCTAssertEqual(closes.count, 1, "close frames: \(closes)", file: file, line: line)
        return closes.first
    }

    // MARK: Heartbeat

    func testAPingGoesOutAtEveryHeartbeat() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        socket.advance(by: .milliseconds(999))
        XCTAssertEqual(try socket.frames(), [], "nothing before the heartbeat")
        socket.advance(by: .milliseconds(1))
        XCTAssertEqual(try socket.frames(), [.init(opcode: Socket.ping, payload: [])])
    }

    func testAClientSilentForAWholeHeartbeatAfterAPingIsClosedWith1001PingTimeoutThenCut() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        socket.advance(by: .seconds(1))
        XCTAssertEqual(try socket.frames().map(\.opcode), [Socket.ping])
        socket.advance(by: .seconds(1))
        let close = onlyClose(try socket.frames())
        XCTAssertEqual(close?.code, 1001)
        XCTAssertEqual(close?.reason, "Ping timeout")
        // The client never answers the close: the socket is cut when the grace ends, not before.
        socket.advance(by: WebSocketConnectionStateMachine.closeGrace - .milliseconds(1))
        XCTAssertTrue(socket.isOpen)
        socket.advance(by: .milliseconds(1))
        XCTAssertFalse(socket.isOpen)
        XCTAssertEqual(socket.hub.connectionCount, 0, "the hub forgot the connection")
    }

    func testAClientThatAnswersEveryPingStaysConnectedAndServed() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        for _ in 0..<5 {
            socket.advance(by: .seconds(1))
            let ping = try XCTUnwrap(try socket.frames().first)
            XCTAssertEqual(ping.opcode, Socket.ping)
            try socket.send(Socket.pong, ping.payload)
        }
        XCTAssertTrue(socket.isOpen)
        try socket.sendText(unknownDonation)
        XCTAssertTrue(try socket.frames().contains { $0.text.contains(#""re":"s1""#) }, "still served")
    }

    func testAnyFrameFromTheClientEvenAFragmentShowsItIsThere() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        socket.advance(by: .seconds(1))
        _ = try socket.frames()
        // No pong, only the first fragment of a message: the client is there.
        try socket.sendText(#"{"type":"subscribe","#, fin: false)
        socket.advance(by: .seconds(1))
        XCTAssertEqual(try socket.frames().map(\.opcode), [Socket.ping])
        XCTAssertTrue(socket.isOpen)
    }

    // MARK: Close handshakes

    func testAClientsCloseIsEchoedWithItsCodeAndTheSocketClosed() throws {
        for (sent, echoed) in [(UInt16(4321), UInt16?(4321)), (1012, 1012), (1000, 1000), (1006, 1002), (999, 1002)] {
            let socket = try welcomed()
            defer { socket.stop() }
            try socket.sendClose(code: sent)
            XCTAssertEqual(try socket.frames(), [.init(opcode: Socket.close, payload: echoed.map { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } ?? [])], "\(sent)")
            XCTAssertFalse(socket.isOpen, "\(sent): the server closes TCP after the echo")
            XCTAssertEqual(socket.hub.connectionCount, 0)
        }
        let socket = try welcomed()
        defer { socket.stop() }
        try socket.sendClose(code: nil)
        XCTAssertEqual(try socket.frames(), [.init(opcode: Socket.close, payload: [])], "a close without a code is answered without one")
        XCTAssertFalse(socket.isOpen)
    }

    func testABrokerCloseIsFinishedAtOnceWhenTheClientAnswers() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        socket.hub.closeAll(code: 1001, reason: "server shutting down")
        let close = onlyClose(try socket.frames())
        XCTAssertEqual(close?.code, 1001)
        XCTAssertEqual(close?.reason, "server shutting down")
        try socket.sendClose(code: 1001)
        XCTAssertEqual(try socket.frames(), [], "the answer to the broker's close is not echoed")
        XCTAssertFalse(socket.isOpen, "closed on the answer, without waiting for the grace")
    }

    func testABrokerCloseTheClientNeverAnswersIsCutAfterTheGrace() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        socket.hub.closeAll(code: 1001, reason: "server shutting down")
        XCTAssertEqual(onlyClose(try socket.frames())?.code, 1001)
        socket.advance(by: .milliseconds(1_999))
        XCTAssertTrue(socket.isOpen)
        XCTAssertEqual(try socket.frames(), [], "no heartbeat ping while closing")
        socket.advance(by: .milliseconds(1))
        XCTAssertFalse(socket.isOpen)
    }

    /// The end of the shutdown grace (`Hub.abortAll`): a socket whose client never answered the 1001 is cut at
    /// once, not after another close grace; so is one the broker had not even closed.
    func testAnAbortCutsTheSocketAtOnce() throws {
        let closing = try welcomed()
        defer { closing.stop() }
        closing.hub.closeAll(code: 1001, reason: "server shutting down")
        XCTAssertEqual(onlyClose(try closing.frames())?.code, 1001)
        closing.advance(by: .milliseconds(500))
        XCTAssertTrue(closing.isOpen, "within the close grace")
        closing.hub.abortAll()
        closing.advance(by: .zero)
        XCTAssertFalse(closing.isOpen, "cut at once, 1.5 s before the grace would have cut it")

        let open = try welcomed()
        defer { open.stop() }
        open.hub.abortAll()
        open.advance(by: .zero)
        XCTAssertFalse(open.isOpen, "cut at once, without a close grace")
    }

    func testAClientThatClosesAndStopsReadingIsCutAfterTheGrace() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        // The client's receive window is full: the echo of its close can never be written.
        socket.sendBuffer.stuck = true
        try socket.sendClose(code: 1000)
        socket.advance(by: .seconds(1))
        XCTAssertTrue(socket.isOpen, "waiting for the echo to go out")
        XCTAssertEqual(socket.hub.connectionCount, 1)
        socket.advance(by: WebSocketConnectionStateMachine.closeGrace)
        XCTAssertFalse(socket.isOpen, "cut: it would otherwise hold its socket and a connection slot for ever")
        XCTAssertEqual(socket.hub.connectionCount, 0)
    }

    func testAClientsCloseWhileTheBrokersIsStuckInTheQueueIsEchoedInItsPlace() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        socket.setWritable(false)
        socket.hub.closeAll(code: 1001, reason: "server shutting down")
        XCTAssertEqual(try socket.frames(), [], "the close waits for the socket")
        try socket.sendClose(code: 4321)
        XCTAssertEqual(try socket.frames().compactMap(\.close).map(\.code), [4321], "one close: the echo")
        XCTAssertFalse(socket.isOpen)
    }

    func testMessagesAfterTheBrokersCloseAreNotRead() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        let subscribes = #"broker_frames_in_total{type="subscribe"}"#
        // Queued from the hub's side: the message arrives before the event loop hears of the close.
        socket.hub.closeAll(code: 1001, reason: "server shutting down")
        try socket.sendText(unknownDonation)
        XCTAssertEqual(try socket.frames().map(\.opcode), [Socket.close])
        try socket.sendText(unknownDonation)
        XCTAssertEqual(socket.metric( subscribes) ?? 0, 0, "neither message was read")
    }

    func testAPublishAfterTheTokenExpiredIsNotRead() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        let publishes = #"broker_frames_in_total{type="publish"}"#
        // Past the token's exp and the verifier's leeway: the sweep closes the connection with 4001.
        socket.clock.advance(by: (Socket.tokenExpiresAt + TokenLeeway.seconds) * 1000 - socket.clock.now)
        socket.hub.closeExpiredConnections()
        try socket.sendText(#"{"type":"publish","id":"late","position":{"lat":1,"lon":1,"timestamp":\#(socket.clock.now)}}"#)
        let close = onlyClose(try socket.frames())
        XCTAssertEqual(close?.code, 4001)
        XCTAssertEqual(socket.metric( publishes) ?? 0, 0, "the publish was not read")
    }

    // MARK: Read gating and pings

    func testAClientThatDoesNotReadIsNotReadEither() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        socket.channel.read()
        XCTAssertEqual(socket.readCounter.reads, 1)
        socket.setWritable(false)
        socket.channel.read()
        socket.channel.read()
        XCTAssertEqual(socket.readCounter.reads, 1, "no read while the socket does not drain")
        socket.setWritable(true)
        XCTAssertEqual(socket.readCounter.reads, 2, "the read asked for is done once it drains")
    }

    func testPingsBeyondTheRateSpendTheErrorBudgetAndClose4009() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        // The ping allowance, plus the invalid-frame budget (10), plus one; the clock stands still.
        for _ in 0...(WebSocketConnectionHandler.pingBurst + 10) { try socket.send(Socket.ping, [1]) }
        let frames = try socket.frames()
        XCTAssertEqual(frames.first, .init(opcode: Socket.pong, payload: [1]), "pings within the rate are answered")
        let close = onlyClose(frames)
        XCTAssertEqual(close?.code, 4009)
        XCTAssertEqual(close?.reason, "too many pings")
    }

    func testAPingIsAnsweredWithItsPayloadEvenBetweenFragments() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        try socket.sendText(#"{"type":"subscribe","id":"s1","#, fin: false)
        try socket.send(Socket.ping, [1, 2, 3])
        try socket.send(Socket.continuation, Array(#""donation":"d-404"}"#.utf8))
        let frames = try socket.frames()
        XCTAssertEqual(frames.first, .init(opcode: Socket.pong, payload: [1, 2, 3]))
        XCTAssertTrue(frames.contains { $0.text.contains(#""re":"s1""#) && $0.text.contains("not-found") }, "the fragments were joined")
    }

    // MARK: Framing rules

    private static let invalidFrames = #"broker_frames_in_total{type="invalid"}"#

    /// Sends `hostile` on a fresh socket and returns the one close frame it gets; the violation is counted.
    private func closeFor(_ hostile: (Socket) throws -> Void, file: StaticString = #filePath, line: UInt = #line) throws -> (code: UInt16?, reason: String)? {
        let socket = try welcomed()
        defer { socket.stop() }
        try hostile(socket)
        let close = onlyClose(try socket.framesAfterWelcome(), file: file, line: line)
        XCTAssertGreaterThanOrEqual(socket.metric( Self.invalidFrames) ?? 0, 1, "counted", file: file, line: line)
        return close
    }

    func testEachFramingViolationClosesWithItsCodeAndReason() throws {
        let cases: [(String, (Socket) throws -> Void, UInt16, String)] = [
            ("unmasked", { try $0.send(Socket.text, Array("{}".utf8), masked: false) }, 1002, "client frames must be masked"),
            ("unmasked fragment", { try $0.sendText("{", fin: false); try $0.send(Socket.continuation, [0x7D], masked: false) }, 1002, "client frames must be masked"),
            ("stray continuation", { try $0.send(Socket.continuation, Array("{}".utf8)) }, 1002, "continuation frame with no message to continue"),
            ("new message before the last ended", { try $0.sendText("{", fin: false); try $0.sendText("{}") }, 1002, "new message before the previous one was finished"),
            ("invalid UTF-8", { try $0.send(Socket.text, [0x7B, 0xFF, 0xFE, 0x7D]) }, 1007, "text message is not valid UTF-8"),
            ("invalid UTF-8 across fragments", { try $0.send(Socket.text, fin: false, [0x7B, 0xE2]); try $0.send(Socket.continuation, [0x28, 0xA1]) }, 1007, "text message is not valid UTF-8"),
            ("fragments past the limit", { socket in
                try socket.send(Socket.text, fin: false, Array(repeating: 0x20, count: 2_000))
                for _ in 0..<2 { try socket.send(Socket.continuation, fin: false, Array(repeating: 0x20, count: 2_000)) }
            }, 1009, "message too large"),
            ("too many fragments", { socket in
                try socket.sendText("[", fin: false)
                for _ in 0..<WebSocketConnectionHandler.maxFragments { try socket.send(Socket.continuation, fin: false, []) }
            }, 1009, "message in too many fragments"),
            ("reserved opcode", { try $0.send(0x3, [1]) }, 1002, "unknown opcode"),
        ]
        for (name, hostile, code, reason) in cases {
            let close = try closeFor(hostile)
            XCTAssertEqual(close?.code, code, name)
            XCTAssertEqual(close?.reason, reason, name)
        }
    }

    func testFrameErrorsNIOFindsAreAnsweredByItsErrorHandlerAndTheSocketClosed() throws {
        for (name, opcode, fin, size, code) in [("oversized frame", Socket.text, true, 5_000, UInt16(1009)), ("fragmented ping", Socket.ping, false, 3, 1002)] {
            let socket = try welcomed()
            defer { socket.stop() }
            try socket.send(opcode, fin: fin, Array(repeating: 0x20, count: size))
            XCTAssertEqual(onlyClose(try socket.frames())?.code, code, name)
            XCTAssertFalse(socket.isOpen, name)
            XCTAssertEqual(socket.metric( Self.invalidFrames), 1, "\(name): counted")
        }
    }

    func testMessagesSplitAnywhereBetweenReadsAreEachAnsweredOnce() throws {
        // Each answer is a refusal (an unknown donation): a budget that lets all of them through.
        let socket = try welcomed { try Socket(invalidFramesPerMinute: 1_000) }
        defer { socket.stop() }
        // Three messages in one stream, cut into reads of every size from one byte: each answered once, in order.
        var stream = ByteBuffer()
        for id in ["s1", "s2", "s3"] {
            var frame = Socket.frameBytes(Socket.text, fin: true, Array(unknownDonation.replacingOccurrences(of: "s1", with: id).utf8), masked: true)
            stream.writeBuffer(&frame)
        }
        for readSize in [1, 2, 3, 7, 50, 61, 200] {
            try socket.sendSplit(stream, readSize: readSize)
            let answers = try socket.frames().map(\.text).filter { $0.contains(#""re":"#) }
            XCTAssertEqual(answers.count, 3, "reads of \(readSize) bytes: \(answers)")
            for (answer, id) in zip(answers, ["s1", "s2", "s3"]) { XCTAssertTrue(answer.contains(#""re":"\#(id)""#), "reads of \(readSize) bytes") }
        }
        XCTAssertTrue(socket.isOpen)
    }

    func testAFrameAnnouncedOverTheSizeIsRefusedOnItsHeaderAndNothingAfterItIsRead() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        // A header announcing 1 TiB, then a message in the same read: the header alone is refused with 1009.
        var bytes = ByteBuffer(bytes: [0x81, 0x80 | 127])
        bytes.writeInteger(UInt64(1) << 40)
        bytes.writeBytes([1, 2, 3, 4])
        var message = Socket.frameBytes(Socket.text, fin: true, Array(unknownDonation.utf8), masked: true)
        bytes.writeBuffer(&message)
        try socket.channel.writeInbound(bytes)
        socket.channel.embeddedEventLoop.run()
        let frames = try socket.frames()
        XCTAssertEqual(onlyClose(frames)?.code, 1009)
        XCTAssertFalse(frames.contains { $0.text.contains(#""re":"s1""#) }, "nothing after the refused header is read")
        XCTAssertFalse(socket.isOpen)
        XCTAssertEqual(socket.metric( Self.invalidFrames), 1, "counted")
    }

    func testAMessageInAsManyFragmentsAsAllowedIsServed() throws {
        let socket = try welcomed()
        defer { socket.stop() }
        // Padded with spaces (valid JSON) to two bytes per fragment.
        let pieces = WebSocketConnectionHandler.maxFragments
        let message = Array((unknownDonation + String(repeating: " ", count: 2 * pieces - unknownDonation.utf8.count)).utf8)
        let size = 2
        let chunks = stride(from: 0, to: message.count, by: size).map { Array(message[$0..<min($0 + size, message.count)]) }
        for (index, chunk) in chunks.enumerated() {
            try socket.send(index == 0 ? Socket.text : Socket.continuation, fin: index == chunks.count - 1, chunk)
        }
        XCTAssertEqual(chunks.count, pieces)
        XCTAssertTrue(try socket.frames().contains { $0.text.contains(#""re":"s1""#) })
        XCTAssertTrue(socket.isOpen)
    }

    func testAFragmentWaitingForTheRestDoesNotKeepTheReceiveBufferAlive() throws {
        var assembler = ClientFrameAssembler()
        // A fragment read from the socket is a slice of the whole receive buffer.
        var received = ByteBuffer(repeating: 0x20, count: 65_536)
        let slice = try XCTUnwrap(received.readSlice(length: 8))
        let key = WebSocketMaskingKey.random()
        let frame = WebSocketFrame(fin: false, opcode: .text, maskKey: key, data: slice)
        guard case .kept = assembler.take(frame, maxFragments: 64, maxBytes: 4096, allocator: ByteBufferAllocator()) else {
            return XCTFail("a first fragment is kept")
        }
        let kept = try XCTUnwrap(assembler.keptBytes)
        XCTAssertLessThan(kept.storageCapacity, 1_024, "the fragment is copied out of the receive buffer")
        var expected = slice
        expected.webSocketUnmask(key)
        XCTAssertEqual(kept, expected, "unmasked")
    }
}
