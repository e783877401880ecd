import BrokerProtocol
import Foundation
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport

#if canImport(Glibc)
import Glibc
@testable import LocationBroker
#endif

/// Upgrade requests as an attacker or an odd client writes them, sent byte for byte on a bare socket to a live
/// broker: split into tiny packets, followed by a frame or by another request, folded, smuggled, duplicated,
/// oversized. Each must get the answer the protocol gives (docs/PROTOCOL.md), whichever way the broker reads the
/// head (docs/SECURITY.md, "The hand-written upgrade").
final class UpgradeHostileHeadTests: XCTestCase {
    /// What the broker answered: the status line's code, the head, and the body (for a 101, the WebSocket frames
    /// read after it, as text).
    struct Reply {
        var status: Int?
        var head: String
        var body: String
        /// The opcodes of the frames after a 101.
        var opcodes: [UInt8] = []

        /// The `code` of a JSON refusal.
        var errorCode: String? {
            struct Envelope: Decodable {
                struct Inner: Decodable { let code: String }
                let error: Inner
            }
            return (try? JSONDecoder().decode(Envelope.self, from: Data(body.utf8)))?.error.code
        }
    }

    static let key = "dGhlIHNhbXBsZSBub25jZQ=="

    /// An upgrade request for `target`, with `extra` header lines (each ending in CRLF) after the usual ones.
    static func upgrade(_ target: String = "/v1/ws", method: String = "GET", version: String = "HTTP/1.1", extra: String = "") -> String {
        "\(method) \(target) \(version)\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\(extra)\r\n"
    }

    /// Sends `chunks` as separate packets (TCP_NODELAY, a moment between them), then reads the answer: a head and
    /// its `Content-Length` body, or a 101 and `frames` WebSocket frames, or whatever came before the broker closed.
    /// `wait` bounds each read: after that long without a byte, what came is the answer.
    static func exchange(port: Int, _ chunks: [[UInt8]], frames: Int = 1, wait: Int = 8) async throws -> Reply {
        try await blocking("an answer from the broker on port \(port)", deadline: .now + .seconds(15)) {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            var timeout = timeval(tv_sec: wait, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard Loopback.connect(fd, port: port) == 0 else { throw POSIXError(.ECONNREFUSED) }
            for (index, chunk) in chunks.enumerated() {
                if index > 0 { usleep(1_000) }  // so that each chunk leaves as a packet of its own
                _ = chunk.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while Self.parse(received, frames: frames) == nil {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                received += buffer[..<count]
            }
            return Self.parse(received, frames: frames) ?? Self.partial(received)
        }
    }

    /// Sends `bytes` and reads everything the broker writes until it closes the socket (or `wait` seconds pass
    /// without a byte).
    static func everything(port: Int, _ bytes: [UInt8], wait: Int = 4) async throws -> String {
        try await blocking("everything the broker on port \(port) writes", deadline: .now + .seconds(15)) {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var timeout = timeval(tv_sec: wait, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard Loopback.connect(fd, port: port) == 0 else { throw POSIXError(.ECONNREFUSED) }
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                received += buffer[..<count]
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// The reply in `bytes` once it is complete, else `nil`.
    static func parse(_ bytes: [UInt8], frames: Int) -> Reply? {
        guard let end = bytes.firstRange(of: [13, 10, 13, 10]) else { return nil }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
        let status = head.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) }
        var rest = Array(bytes[end.upperBound...])
        if status == 101 {
            var reply = Reply(status: 101, head: head, body: "")
            for _ in 0..<frames {
                guard rest.count >= 2 else { return nil }
                var length = Int(rest[1] & 0x7F), offset = 2
                if length == 126 {
                    guard rest.count >= 4 else { return nil }
                    length = Int(rest[2]) << 8 | Int(rest[3])
                    offset = 4
                }
                guard rest.count >= offset + length else { return nil }
                reply.opcodes.append(rest[0] & 0x0F)
                reply.body += String(decoding: rest[offset..<offset + length], as: UTF8.self)
                rest.removeFirst(offset + length)
            }
            return reply
        }
        let lengthLine = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
        let length = lengthLine.flatMap { Int($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) } ?? 0
        guard rest.count >= length else { return nil }
        return Reply(status: status, head: head, body: String(decoding: rest.prefix(length), as: UTF8.self))
    }

    /// What came before the broker closed the socket (or stopped answering).
    static func partial(_ bytes: [UInt8]) -> Reply {
        let text = String(decoding: bytes, as: UTF8.self)
        let status = text.hasPrefix("HTTP/1.") ? text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } : nil
        return Reply(status: status, head: text, body: "")
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    // MARK: Served

    func testAnUpgradeSplitIntoOneBytePacketsIsServed() async throws {
        try await withLiveBroker { live in
            let token = try await LiveBroker.token("donor@example.org")
            let request = Self.bytes(Self.upgrade(extra: "Authorization: Bearer \(token)\r\n"))
            let reply = try await Self.exchange(port: live.port, request.map { [$0] })
            XCTAssertEqual(reply.status, 101, reply.head)
            XCTAssertTrue(reply.body.contains(#""identity":"donor@example.org""#), reply.body)
        }
    }

    func testAnUpgradeWithTheTokenInTheQueryIsServed() async throws {
        try await withLiveBroker { live in
            let token = try await LiveBroker.token("donor@example.org")
            let reply = try await Self.exchange(port: live.port, [Self.bytes(Self.upgrade("/v1/ws?token=\(token)"))])
            XCTAssertEqual(reply.status, 101, reply.head)
            XCTAssertTrue(reply.head.contains("\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), reply.head)
            XCTAssertTrue(reply.body.contains(#""type":"welcome""#), reply.body)
        }
    }

    func testAFrameInTheUpgradePacketReachesTheWebSocket() async throws {
        try await withLiveBroker { live in
            let token = try await LiveBroker.token("donor@example.org")
            // The head and a masked ping "hi" in one packet: the ping must be answered after the welcome.
            let ping: [UInt8] = [0x89, 0x82, 1, 2, 3, 4, UInt8(ascii: "h") ^ 1, UInt8(ascii: "i") ^ 2]
            let reply = try await Self.exchange(port: live.port, [Self.bytes(Self.upgrade(extra: "Authorization: Bearer \(token)\r\n")) + ping], frames: 2)
            XCTAssertEqual(reply.status, 101, reply.head)
            XCTAssertEqual(reply.opcodes, [0x1, 0xA])
            XCTAssertTrue(reply.body.hasSuffix("hi"), reply.body)
        }
    }

    func testALongHeadIsStillServed() async throws {
        try await withLiveBroker { live in
            let token = try await LiveBroker.token("donor@example.org")
            // A browser's cookies for the broker's domain: well within the 32 KB a head may take.
            let cookie = "Cookie: c=\(String(repeating: "a", count: 9_000))\r\n"
            let reply = try await Self.exchange(port: live.port, [Self.bytes(Self.upgrade(extra: cookie + "Authorization: Bearer \(token)\r\n"))])
            XCTAssertEqual(reply.status, 101, reply.head)
        }
    }

    func testAHeadThatNeverEndsIsCutAtTheHandshakeTimeout() async throws {
        try await withLiveBroker({ $0.handshakeTimeoutSeconds = 1 }) { live in
            let port = live.port
            // A slowloris client: a byte of a header every 100 ms, the head never ends; the broker must close the
            // socket at the handshake timeout (1 s) although bytes keep coming.
            let closedAfter = try await blocking("the broker cuts a head that never ends", deadline: .now + .seconds(15)) { () -> Duration? in
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                defer { close(fd) }
                guard Loopback.connect(fd, port: port) == 0 else { throw POSIXError(.ECONNREFUSED) }
                let start = ContinuousClock.now
                let opening = Array("GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8)
                _ = opening.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                for _ in 0..<80 {
                    var byte = UInt8(ascii: "a")
                    var probe: UInt8 = 0
                    let sent = send(fd, &byte, 1, Int32(MSG_NOSIGNAL))
                    let got = recv(fd, &probe, 1, Int32(MSG_DONTWAIT))
                    if sent < 0 || got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                        return ContinuousClock.now - start
                    }
                    usleep(100_000)
                }
                return nil
            }
            let elapsed = try XCTUnwrap(closedAfter, "the socket was still open after 8 s of a head that never ends")
            XCTAssertLessThan(elapsed, .seconds(4))
        }
    }

    // MARK: Refused as before

    func testAForgedTokenGetsA401WithItsReason() async throws {
        try await withLiveBroker { live in
            let forged = try await LiveBroker.token("donor@example.org", secret: "an-attacker-secret-0123456789-0123456789")
            let reply = try await Self.exchange(port: live.port, [Self.bytes(Self.upgrade(extra: "Authorization: Bearer \(forged)\r\n"))])
            XCTAssertEqual(reply.status, 401, reply.head)
            XCTAssertEqual(reply.errorCode, "unauthorized")
            XCTAssertTrue(reply.body.contains("the token's signature is not valid"), reply.body)
        }
    }

    func testAnUpgradeToAnotherPathIsA404() async throws {
        try await withLiveBroker { live in
            let token = try await LiveBroker.token("donor@example.org")
            for target in ["/v1/wsx", "/v1/ws/", "/V1/WS", "//v1/ws"] {
                let reply = try await Self.exchange(port: live.port, [Self.bytes(Self.upgrade(target, extra: "Authorization: Bearer \(token)\r\n"))])
                XCTAssertEqual(reply.status, 404, "\(target): \(reply.head)")
            }
        }
    }

    func testAFoldedAuthorizationHeaderIsNeverAnUpgrade() async throws {
        try await withLiveBroker { live in
            let token = try await LiveBroker.token("donor@example.org")
            // obs-fold (RFC 9112 5.2): a reader that unfolded it would see a valid bearer token.
            let reply = try await Self.exchange(port: live.port, [Self.bytes(Self.upgrade(extra: "Authorization: Bearer\r\n \(token)\r\n"))])
            XCTAssertNotEqual(reply.status, 101, reply.head)
        }
    }

    func testAForgedTokenCannotHideBehindAValidOne() async throws {
        try await withLiveBroker { live in
            let token = try await LiveBroker.token("donor@example.org")
            let forged = try await LiveBroker.token("victim@example.org", secret: "an-attacker-secret-0123456789-0123456789")
            let reply = try await Self.exchange(
                port: live.port, [Self.bytes(Self.upgrade(extra: "Authorization: Bearer \(forged)\r\nAuthorization: Bearer \(token)\r\n"))])
            XCTAssertFalse(reply.body.contains("victim@example.org"), reply.body)
            XCTAssertNotEqual(reply.status, 101, reply.head)
        }
    }

    func testASmuggledRequestAfterTheHeadIsNeverAnswered() async throws {
        try await withLiveBroker { live in
            let token = try await LiveBroker.token("donor@example.org")
            // A body announced by Content-Length that is another request: the upgrade is refused for having a body,
            // and nothing after its head is read, so the smuggled request is never answered.
            let smuggled = "GET /v1/donations HTTP/1.1\r\nHost: x\r\n\r\n"
            let text = try await Self.everything(
                port: live.port, Self.bytes(Self.upgrade(extra: "Authorization: Bearer \(token)\r\nContent-Length: \(smuggled.utf8.count)\r\n") + smuggled))
            XCTAssertTrue(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), text)
            XCTAssertTrue(text.contains("an upgrade request has no body"), text)
            XCTAssertEqual(text.components(separatedBy: "HTTP/1.").count, 2, "a second answer: \(text)")
        }
    }

    func testAPipelinedRequestAfterTheHeadIsNeverAnswered() async throws {
        try await withLiveBroker { live in
            let token = try await LiveBroker.token("donor@example.org")
            let pipelined = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
            let reply = try await Self.exchange(
                port: live.port, [Self.bytes(Self.upgrade(extra: "Authorization: Bearer \(token)\r\n") + pipelined)], frames: 2, wait: 2)
            Self.expectNothingAnsweredButTheUpgrade(reply)
        }
    }

    /// The 101 and the welcome, and no second HTTP answer: what followed the head went to the WebSocket.
    static func expectNothingAnsweredButTheUpgrade(_ reply: Reply, file: StaticString = #filePath, line: UInt = #line) {
        // Nothing more came within the wait, so `reply` holds everything the broker wrote, unparsed.
        let text = reply.head + reply.body
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"), text, file: file, line: line)
        XCTAssertTrue(text.contains(#""type":"welcome""#), text, file: file, line: line)
        XCTAssertEqual(text.components(separatedBy: "HTTP/1.").count, 2, "a second answer: \(text)", file: file, line: line)
    }

    /// RFC 6455's upgrade is a GET over HTTP/1.1: a HEAD or an HTTP/1.0 upgrade is refused whatever its token, and
    /// says why.
    func testAHeadOrHTTP10UpgradeIsRefusedWhateverItsToken() async throws {
        try await withLiveBroker { live in
            let token = try await LiveBroker.token("donor@example.org")
            let forged = try await LiveBroker.token("donor@example.org", secret: "an-attacker-secret-0123456789-0123456789")
            for (method, version) in [("HEAD", "HTTP/1.1"), ("GET", "HTTP/1.0")] {
                for bearer in [forged, token] {
                    let reply = try await Self.exchange(
                        port: live.port, [Self.bytes(Self.upgrade(method: method, version: version, extra: "Authorization: Bearer \(bearer)\r\n"))])
                    XCTAssertEqual(reply.status, 400, "\(method) \(version): \(reply.head)")
                    XCTAssertTrue(reply.body.contains("GET /v1/ws HTTP/1.1"), reply.body)
                    XCTAssertFalse(reply.body.contains("donor@example.org"), reply.body)
                }
            }
        }
    }

    func testAnUpgradeWithoutAKeyIsRefused() async throws {
        try await withLiveBroker { live in
            let token = try await LiveBroker.token("donor@example.org")
            let request = Self.upgrade(extra: "Authorization: Bearer \(token)\r\n").replacingOccurrences(of: "Sec-WebSocket-Key: \(Self.key)\r\n", with: "")
            let reply = try await Self.exchange(port: live.port, [Self.bytes(request)])
            XCTAssertNotEqual(reply.status, 101, reply.head)
        }
    }
}
