import BrokerProtocol
import DeterministicRandom
import Foundation
import HTTPTypes
import XCTest

@testable import BrokerCore
@testable import BrokerWebSocket

/// The hand-written upgrade reads only one plain form of request head; every other head, valid or not, is left to
/// NIO's HTTP reader (docs/SECURITY.md, "The hand-written upgrade").
final class UpgradeRequestHeadTests: XCTestCase {
    static let plain = [
        "GET /v1/ws HTTP/1.1", "Host: 127.0.0.1:8080", "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Authorization: Bearer a.b.c",
    ]

    /// The head of `lines` joined as a client sends them (without the blank line that ends the head).
    static func parse(_ lines: [String], separator: String = "\r\n") -> UpgradeRequestHead? {
        UpgradeRequestHead.parse(Array(lines.joined(separator: separator).utf8))
    }

    /// `plain` with the line that starts like `prefix` replaced (or removed, for `nil`).
    static func replacing(_ prefix: String, with line: String?) -> [String] {
        plain.compactMap { $0.hasPrefix(prefix) ? line : $0 }
    }

    func testThePlainFormIsReadWithEveryField() throws {
        let head = try XCTUnwrap(Self.parse(Self.plain))
        XCTAssertEqual(head.request.method, .get)
        XCTAssertEqual(head.request.path, "/v1/ws")
        XCTAssertEqual(head.request.authority, "127.0.0.1:8080")
        XCTAssertEqual(head.request.headerFields[.authorization], "Bearer a.b.c")
        // RFC 6455 section 1.3's example.
        XCTAssertEqual(head.accept, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    func testWhatBrowsersSendIsThePlainForm() throws {
        var lines = Self.replacing("GET", with: "GET /v1/ws?token=a.b.c HTTP/1.1")
        lines = lines.map { $0.hasPrefix("Connection") ? "connection: keep-alive, Upgrade" : $0 }.filter { !$0.hasPrefix("Authorization") }
        lines += ["Origin: https://example.org", "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits", "User-Agent: Mozilla/5.0\t"]
        let head = try XCTUnwrap(Self.parse(lines))
        XCTAssertEqual(head.request.path, "/v1/ws?token=a.b.c", "the token a browser sends in the query is kept")
        XCTAssertEqual(head.request.headerFields[.userAgent], "Mozilla/5.0")
    }

    func testAnotherRequestLineIsNotThePlainForm() {
        for line in [
            "HEAD /v1/ws HTTP/1.1", "GET /v1/ws HTTP/1.0", "GET /v1/wsx HTTP/1.1", "GET /v1/ws/ HTTP/1.1", "GET //v1/ws HTTP/1.1",
            "GET http://host/v1/ws HTTP/1.1", "GET  /v1/ws HTTP/1.1", "GET /v1/ws  HTTP/1.1", "GET /v1/ws HTTP/1.1 ", "get /v1/ws HTTP/1.1",
            "GET /v1/ws\u{7F} HTTP/1.1", "GET /v1/ws#x HTTP/1.1x", "GET /v1/ws",
        ] {
            XCTAssertNil(Self.parse(Self.replacing("GET", with: line)), line)
        }
    }

    func testAnOddHeaderLineIsNotThePlainForm() {
        for (why, extra) in [
            ("folded", ["Authorization: Bearer", " a.b.c"]), ("tab-folded", ["X-A: 1", "\tcontinued"]),
            ("space before the colon", ["X-A : 1"]), ("no colon", ["X-A 1"]), ("empty name", [": 1"]),
            ("a NUL", ["X-A: 1\u{0}2"]), ("non-ASCII", ["X-A: caf\u{E9}"]), ("a bare CR", ["X-A: 1\r2"]), ("a separator in the name", ["X(A): 1"]),
        ] {
            XCTAssertNil(Self.parse(Self.plain + extra), why)
        }
        XCTAssertNil(Self.parse(Self.plain, separator: "\n"), "bare LF line ends")
        XCTAssertNil(Self.parse(Self.plain + [""]), "an empty line inside the head")
    }

    /// `Connection` lists options separated by commas; the upgrade needs `upgrade` among them, in any case, with
    /// spaces or tabs around it. Held to the former check (Foundation's trimming and lower-casing) on a seeded sample.
    func testTheConnectionHeaderNeedsTheUpgradeOptionAmongItsOptions() {
        func former(_ value: String) -> Bool {
            value.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces).lowercased() == "upgrade" })
        }
        var values = ["Upgrade", "keep-alive, Upgrade", "keep-alive,upgrade", "\tUPGRADE\t", ",upgrade,", "UpGrAdE", "up grade", "upgrade2",
            "upgrad", "keep-alive upgrade", "upgraded", "", ","]
        var random = SeededRandom(seed: 906)
        let pieces = ["upgrade", "Upgrade", "UPGRADE", "keep-alive", "close", " ", "\t", ",", "upgraded", "up", "grade", "x", "-"]
        for _ in 0..<3_000 {
            values.append((0..<Int.random(in: 1...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined())
        }
        for value in values {
            let head = Self.parse(Self.replacing("Connection", with: "Connection: \(value)"))
            // The field's value is read without the spaces and tabs at its ends, as NIO's reader reads it.
            let trimmed = value.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            XCTAssertEqual(head != nil, former(trimmed), value.debugDescription)
        }
    }

    func testADuplicatedHeaderIsNotThePlainForm() {
        for line in ["Authorization: Bearer x.y.z", "authorization: Bearer a.b.c", "Host: other", "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAA==", "Upgrade: websocket"] {
            XCTAssertNil(Self.parse(Self.plain + [line]), line)
        }
    }

    func testTheConnectionHeaderMustListUpgradeInAnyCaseAndSpacing() {
        for value in ["UPGRADE", "keep-alive ,\tUpgrade\t", ",,upgrade,,", "Keep-Alive, uPgRaDe, close", " upgrade "] {
            XCTAssertNotNil(Self.parse(Self.replacing("Connection", with: "Connection: \(value)")), value)
        }
        for value in ["upgrade2", "up grade", "upgrade;q=1", "keep-alive", "upgrad", "upgradE\u{7F}", "`pgrade", "UPGRADE-"] {
            XCTAssertNil(Self.parse(Self.replacing("Connection", with: "Connection: \(value)")), value)
        }
    }

    func testABodyIsNotThePlainForm() {
        for line in ["Content-Length: 12", "Content-Length: 00", "Content-Length: 0, 0", "Transfer-Encoding: chunked", "transfer-encoding: identity"] {
            XCTAssertNil(Self.parse(Self.plain + [line]), line)
        }
        XCTAssertNil(Self.parse(Self.plain + ["Content-Length: 0", "Content-Length: 0"]), "twice")
        // What NIO's client sends: an empty body, said so.
        XCTAssertNotNil(Self.parse(Self.plain + ["Content-Length: 0"]))
    }

    func testAnIncompleteUpgradeIsNotThePlainForm() {
        for (prefix, line) in [
            ("Host", nil), ("Upgrade", nil), ("Upgrade", "Upgrade: h2c"), ("Upgrade", "Upgrade: websocket, h2c"), ("Connection", nil),
            ("Connection", "Connection: keep-alive"), ("Connection", "Connection: upgraded"), ("Sec-WebSocket-Version", nil),
            ("Sec-WebSocket-Version", "Sec-WebSocket-Version: 8"), ("Sec-WebSocket-Key", nil), ("Sec-WebSocket-Key", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ"),
            ("Sec-WebSocket-Key", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZS4="), ("Sec-WebSocket-Key", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25j*Q=="),
        ] as [(String, String?)] {
            XCTAssertNil(Self.parse(Self.replacing(prefix, with: line)), line ?? "no \(prefix)")
        }
    }
}
