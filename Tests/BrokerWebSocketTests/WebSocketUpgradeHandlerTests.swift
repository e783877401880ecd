import HTTPTypes
import NIOCore
import NIOEmbedded
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import BrokerWebSocket

/// What the first handler of a socket does with what it reads: a plain upgrade is decided by it (upgraded, or
/// refused with its answer, at once or when a check that suspends returns); everything else is handed to the HTTP
/// pipeline with every byte it read, in order.
final class WebSocketUpgradeHandlerTests: XCTestCase {
    /// What the handler did, as the closures it was given saw it.
    final class Record {
        var installedWebSocket: [String] = []
        var installedHTTP = 0
        var decided: [String] = []
    }

    static let refusal = UpgradeRefusal(status: .unauthorized, error: .init(.unauthorized, "the token's signature is not valid"))

    /// A channel whose only handler is the upgrade handler; `decide` decides every plain upgrade (by default, the
    /// bearer token is the identity).
    static func channel(
        decide: @escaping (UpgradeRequestHead) -> UpgradeDecision = { head in
            let token = head.request.headerFields[.authorization].map { String($0.dropFirst("Bearer ".count)) }
            return .now(.success(VerifiedIdentity(identity: token ?? "?", expiresAt: 0)))
        }
    ) throws -> (EmbeddedChannel, Record) {
        let record = Record()
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        try channel.pipeline.syncOperations.addHandler(
            WebSocketUpgradeHandler(
                authorize: decide,
                installWebSocket: { _, identity in record.installedWebSocket.append(identity.identity) },
                installHTTP: { _ in record.installedHTTP += 1 },
                refusalBody: { refusal in ByteBuffer(string: #"{"error":"\#(refusal.error.message)"}"#) },
                decided: { result in
                    switch result {
                    case .success(.webSocket): record.decided.append("upgraded")
                    case .success(.refused): record.decided.append("refused")
                    case .failure: record.decided.append("failed")
                    }
                }))
        return (channel, record)
    }

    static func upgrade(token: String = "a.b.c") -> String {
        "GET /v1/ws HTTP/1.1\r\nHost: b\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer \(token)\r\n\r\n"
    }

    /// The bytes that went past the handler, as text.
    static func passed(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while var bytes = try channel.readInbound(as: ByteBuffer.self) { text += bytes.readString(length: bytes.readableBytes) ?? "" }
        return text
    }

    func testAPlainUpgradeInTinyPiecesIsServedByHand() throws {
        let (channel, record) = try Self.channel()
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        for byte in Self.upgrade().utf8 { try channel.writeInbound(ByteBuffer(bytes: [byte])) }
        XCTAssertEqual(record.installedWebSocket, ["a.b.c"])
        XCTAssertEqual(record.installedHTTP, 0, "NIO's HTTP pipeline was never installed")
        XCTAssertEqual(record.decided, ["upgraded"])
        var written = try XCTUnwrap(channel.readOutbound(as: ByteBuffer.self))
        XCTAssertEqual(written.readString(length: written.readableBytes), UpgradeRequestHead.parse(Array(Self.upgrade().utf8.dropLast(4)))?.switchingProtocols)
        XCTAssertEqual(try Self.passed(channel), "", "the head is not passed on")
        XCTAssertThrowsError(try channel.pipeline.syncOperations.context(handlerType: WebSocketUpgradeHandler.self), "the handler left")
        // What comes next goes straight to the WebSocket handlers.
        try channel.writeInbound(ByteBuffer(bytes: [0x89, 0x80, 1, 2, 3, 4]))
        XCTAssertEqual(try channel.readInbound(as: ByteBuffer.self)?.readableBytes, 6)
    }

    /// NIO reads a socket into a pooled buffer and reuses it when nobody else holds it; a buffer still held at the
    /// next read makes the pool allocate another, and it keeps every one it made for the socket's life (a few hundred
    /// bytes each, on every idle connection). A head that arrives over several reads must not be held in NIO's buffer.
    func testAHeadOverSeveralReadsLeavesTheReceiveBufferToItsPool() throws {
        let (channel, record) = try Self.channel()
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        var pool = NIOPooledRecvBufferAllocator(capacity: 4, recvAllocator: FixedSizeRecvByteBufferAllocator(capacity: 128))
        var head = Substring(Self.upgrade())
        while !head.isEmpty {
            let piece = head.prefix(128)
            head = head.dropFirst(128)
            // As NIO's socket channel does: read into the pool's buffer, fire it, let go of it.
            let (read, _) = pool.buffer(allocator: channel.allocator) { buffer in buffer.writeString(String(piece)) }
            try channel.writeInbound(read)
        }
        XCTAssertEqual(record.decided, ["upgraded"])
        XCTAssertEqual(pool.count, 1, "the pool reused its one buffer for every read of the head")
    }

    func testWhatTheHandlerDoesNotServeIsHandedOverWithEveryByte() throws {
        let plain = Self.upgrade()
        for (why, pieces) in [
            ("another path", [plain.replacingOccurrences(of: "/v1/ws", with: "/healthz")]),
            ("a plain GET without an upgrade", ["GET /v1/ws HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer a.b.c\r\n\r\n"]),
            ("another path with a head over 32 KB", [plain.replacingOccurrences(of: "/v1/ws", with: "/healthz") + String(repeating: "a", count: 33_000)]),
            ("a first line over 32 KB, still open", [String(repeating: "a", count: 20_000), String(repeating: "b", count: 20_000)]),
        ] {
            let (channel, record) = try Self.channel()
            defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
            for piece in pieces { try channel.writeInbound(ByteBuffer(string: piece)) }
            XCTAssertEqual(record.installedHTTP, 1, why)
            XCTAssertEqual(record.installedWebSocket, [], why)
            XCTAssertEqual(record.decided, [], "the HTTP pipeline answers: \(why)")
            XCTAssertEqual(try channel.readOutbound(as: ByteBuffer.self), nil, "nothing written by hand: \(why)")
            XCTAssertEqual(try Self.passed(channel), pieces.joined(), "every byte, in order: \(why)")
        }
    }

    /// An upgrade for `/v1/ws` the broker does not accept is refused by this handler with the rule it breaks, and
    /// nothing after its head is read: a body (perhaps a smuggled request) is never answered.
    func testAnUpgradeNotInThePlainFormIsRefusedByHandWithTheRuleItBreaks() throws {
        let plain = Self.upgrade()
        for (why, head, rule) in [
            ("Host twice", plain.replacingOccurrences(of: "Host: b\r\n", with: "Host: b\r\nHost: c\r\n"), "host is sent once"),
            ("a body", plain.replacingOccurrences(of: "Host: b\r\n", with: "Host: b\r\nContent-Length: 3\r\n") + "abc", "has no body"),
            ("HEAD", plain.replacingOccurrences(of: "GET ", with: "HEAD "), "GET /v1/ws HTTP/1.1"),
            ("HTTP/1.0", plain.replacingOccurrences(of: "HTTP/1.1", with: "HTTP/1.0"), "GET /v1/ws HTTP/1.1"),
            ("a folded header", plain.replacingOccurrences(of: "Bearer a.b.c", with: "Bearer\r\n a.b.c"), "no folded lines"),
            ("version 8", plain.replacingOccurrences(of: "Version: 13", with: "Version: 8"), "Sec-WebSocket-Version is 13"),
            ("a head over 32 KB", String(plain.dropLast(2)) + "X: \(String(repeating: "a", count: 33_000))\r\n\r\n", "longer than 32768 bytes"),
        ] {
            let (channel, record) = try Self.channel()
            defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
            try channel.writeInbound(ByteBuffer(string: head))
            XCTAssertEqual(record.decided, ["refused"], why)
            XCTAssertEqual(record.installedHTTP + record.installedWebSocket.count, 0, why)
            var written = try XCTUnwrap(channel.readOutbound(as: ByteBuffer.self), why)
            let text = written.readString(length: written.readableBytes) ?? ""
            XCTAssertTrue(text.hasPrefix(why == "a head over 32 KB" ? "HTTP/1.1 431 " : "HTTP/1.1 400 Bad Request\r\n"), "\(why): \(text)")
            XCTAssertTrue(text.contains(rule), "\(why): \(text)")
            XCTAssertEqual(try Self.passed(channel), "", "nothing is passed on: \(why)")
            XCTAssertFalse(channel.isActive, why)
        }
    }

    /// A client may send its first frames with the head, before it has read the 101: they reach the WebSocket
    /// handlers, after the upgrade, in order.
    func testFramesSentWithTheHeadReachTheWebSocketHandlers() throws {
        let (channel, record) = try Self.channel()
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        try channel.writeInbound(ByteBuffer(string: Self.upgrade() + "\u{1}\u{2}"))
        XCTAssertEqual(record.decided, ["upgraded"])
        XCTAssertEqual(record.installedHTTP, 0)
        XCTAssertEqual(try Self.passed(channel), "\u{1}\u{2}", "the bytes after the head, and only those")
    }

    func testARefusedUpgradeIsAnsweredByHandWithItsStatusAndBodyThenClosed() throws {
        let (channel, record) = try Self.channel(decide: { _ in .now(.failure(Self.refusal)) })
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        try channel.writeInbound(ByteBuffer(string: Self.upgrade()))
        XCTAssertEqual(record.decided, ["refused"])
        XCTAssertEqual(record.installedHTTP + record.installedWebSocket.count, 0, "nothing else answers it")
        var written = try XCTUnwrap(channel.readOutbound(as: ByteBuffer.self))
        let body = #"{"error":"the token's signature is not valid"}"#
        XCTAssertEqual(
            written.readString(length: written.readableBytes),
            "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Connection: close\r\n\r\n" + body)
        XCTAssertFalse(channel.isActive, "closed once the answer was written")
    }

    /// A decision that suspends (a watch link's store read) keeps the socket on this handler: what arrives
    /// meanwhile is kept and handed to the WebSocket handlers once the upgrade is made.
    func testADecisionThatSuspendsUpgradesWhenItReturnsWithWhatArrivedMeanwhile() async throws {
        let (answer, answered) = AsyncStream.makeStream(of: Void.self)
        let (channel, record) = try Self.channel(decide: { _ in
            .later {
                for await _ in answer { break }
                return .success(VerifiedIdentity(identity: "watcher", expiresAt: 0))
            }
        })
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        try channel.writeInbound(ByteBuffer(string: Self.upgrade()))
        try channel.writeInbound(ByteBuffer(string: "\u{1}"))
        XCTAssertEqual(record.decided, [], "waiting for the check")
        XCTAssertEqual(try Self.passed(channel), "")
        answered.yield()
        try await waitUntil("the check returned") {
            channel.embeddedEventLoop.run()
            return !record.decided.isEmpty
        }
        XCTAssertEqual(record.decided, ["upgraded"])
        XCTAssertEqual(record.installedWebSocket, ["watcher"])
        XCTAssertEqual(try Self.passed(channel), "\u{1}", "what arrived while waiting, after the upgrade")
    }

    /// While a check suspends, a client that floods the socket is closed rather than buffered.
    func testAFloodWhileTheDecisionWaitsClosesTheSocket() throws {
        let (never, end) = AsyncStream.makeStream(of: Void.self)
        defer { end.finish() }
        let (channel, record) = try Self.channel(decide: { _ in
            .later {
                for await _ in never {}
                return .failure(Self.refusal)
            }
        })
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        try channel.writeInbound(ByteBuffer(string: Self.upgrade()))
        for _ in 0..<((UpgradeRequestHead.maximumBytes + WebSocketUpgradeHandler.maximumEarlyBytes) / 4_096 + 2) {
            guard channel.isActive else { break }
            try channel.writeInbound(ByteBuffer(repeating: 0x81, count: 4_096))
        }
        XCTAssertEqual(record.decided, ["failed"])
        XCTAssertFalse(channel.isActive)
    }

    func testASocketClosedBeforeTheHeadEndsIsReported() throws {
        let (channel, record) = try Self.channel()
        try channel.writeInbound(ByteBuffer(string: "GET /v1/ws HTTP/1.1\r\n"))
        _ = try channel.finish(acceptAlreadyClosed: true)
        XCTAssertEqual(record.decided, ["failed"])
        XCTAssertEqual(record.installedHTTP + record.installedWebSocket.count, 0)
    }
}
