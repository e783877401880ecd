import NIOCore
import NIOEmbedded
import XCTest

@testable import LocationBroker

/// What the first handler of a socket does with what it reads: a plain upgrade with an accepted token is served
/// by hand; everything else is handed to NIO's HTTP pipeline with every byte it read, in order.
final class WebSocketUpgradeHandlerTests: XCTestCase {
    /// What the handler did, as the closures it was given saw it.
    final class Record {
        var installedWebSocket: [String] = []
        var installedHTTP = 0
        var decided: [String] = []
    }

    /// A channel whose only handler is the upgrade handler; `accept` says whether the token is accepted.
    static func channel(accept: Bool = true) throws -> (EmbeddedChannel, Record) {
        let record = Record()
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        try channel.pipeline.syncOperations.addHandler(
            WebSocketUpgradeHandler(
                authorize: { head in accept ? VerifiedIdentity(identity: WebSocketEndpoint.token(of: head.request) ?? "?", expiresAt: 0) : nil },
                installWebSocket: { _, identity in record.installedWebSocket.append(identity.identity) },
                installHTTP: { _ in record.installedHTTP += 1 },
                decided: { result in record.decided.append((try? result.get()) == nil ? "failed" : "upgraded") }))
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
        for (why, pieces, accept) in [
            ("a refused token", [plain], false),
            ("another path", [plain.replacingOccurrences(of: "/v1/ws", with: "/healthz")], true),
            ("a frame after the head", [plain + "\u{1}"], true),
            ("a pipelined request in the same read", [plain + "GET / HTTP/1.1\r\n"], true),
            ("a head over 8 KB", [String(plain.dropLast(2)) + "X: \(String(repeating: "a", count: 8_200))\r\n\r\n"], true),
            ("a head over 8 KB, still open", [String(repeating: "a", count: 5_000), String(repeating: "b", count: 5_000)], true),
        ] {
            let (channel, record) = try Self.channel(accept: accept)
            defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
            for piece in pieces { try channel.writeInbound(ByteBuffer(string: piece)) }
            XCTAssertEqual(record.installedHTTP, 1, why)
            XCTAssertEqual(record.installedWebSocket, [], why)
            XCTAssertEqual(record.decided, [], "NIO's pipeline decides: \(why)")
            XCTAssertEqual(try channel.readOutbound(as: ByteBuffer.self), nil, "nothing written by hand: \(why)")
            XCTAssertEqual(try Self.passed(channel), pieces.joined(), "every byte, in order: \(why)")
        }
    }

    func testASocketClosedBeforeTheHeadEndsIsReported() throws {
        let (channel, record) = try Self.channel()
        try channel.writeInbound(ByteBuffer(string: "GET /v1/ws HTTP/1.1\r\n"))
        _ = try channel.finish(acceptAlreadyClosed: true)
        XCTAssertEqual(record.decided, ["failed"])
        XCTAssertEqual(record.installedHTTP + record.installedWebSocket.count, 0)
    }
}
