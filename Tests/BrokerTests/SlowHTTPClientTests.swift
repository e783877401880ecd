import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// HTTP clients that take their time, on purpose or not: a body dripped a byte at a time, a head that never ends,
/// a head the parser cannot read. Each holds a socket for a bounded time only, and is told why when it can be.
final class SlowHTTPClientTests: XCTestCase {
    /// Sends the characters of `text` one at a time, `every` apart, until the peer closes or the task is cancelled.
    private func drip(_ text: String, into socket: RawSocket, every interval: Duration) -> Task<Void, any Error> {
        Task {
            for character in text {
                try await Task.sleep(for: interval)
                guard try await socket.send(String(character)) else { return }
            }
        }
    }

    func testAnAnonymousDrippedBodyIsAnsweredAndTheSocketClosedWithoutReadingTheBody() async throws {
        let live = try await startBroker()
        let socket = try await RawSocket.connect(port: live.port)
        try await socket.send("POST /v1/owntracks HTTP/1.1\r\nHost: broker\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n{")
        // One byte every 200 ms: each would reset an idle timer.
        let dripping = drip(String(repeating: " ", count: 100), into: socket, every: .milliseconds(200))
        defer { dripping.cancel() }
        let answer = try await socket.readUntilClosed(timeout: .seconds(3))
        XCTAssertTrue(answer.text.hasPrefix("HTTP/1.1 401"), answer.text)
        XCTAssertTrue(answer.text.lowercased().contains("connection: close"), "the client is told the socket closes: \(answer.text)")
        XCTAssertTrue(answer.closed, "the socket is closed once the refusal is written, not kept to read the body")
    }

    func testABodyThatDoesNotArriveInTimeIsAnswered408() async throws {
        let live = try await startBroker { $0.requestTimeoutSeconds = 1 }
        let socket = try await RawSocket.connect(port: live.port)
        try await socket.send(
            "PUT /v1/donations/d-1 HTTP/1.1\r\nHost: broker\r\nAuthorization: Bearer \(LiveBroker.backendKey)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"donor\":")
        let started = ContinuousClock.now
        let dripping = drip(String(repeating: " ", count: 100), into: socket, every: .milliseconds(100))
        defer { dripping.cancel() }
        let answer = try await socket.readUntilClosed(timeout: .seconds(4))
        XCTAssertTrue(answer.text.hasPrefix("HTTP/1.1 408"), answer.text)
        XCTAssertTrue(answer.text.contains("did not arrive whole within 1 s"), answer.text)
        XCTAssertTrue(answer.closed)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(3))
    }

    func testAKeepAliveConnectionMustSendItsNextHeadWithinTheDeadline() async throws {
        let live = try await startBroker { $0.requestTimeoutSeconds = 1 }
        let socket = try await RawSocket.connect(port: live.port)
        try await socket.send("GET /healthz HTTP/1.1\r\nHost: broker\r\n\r\n")
        // The next head, dripped: three times the request timeout is all it gets, whatever its pace.
        let head = "GET /healthz HTTP/1.1\r\nHost: broker\r\nX-Padding: " + String(repeating: "a", count: 200) + "\r\n\r\n"
        let started = ContinuousClock.now
        let dripping = drip(head, into: socket, every: .milliseconds(100))
        defer { dripping.cancel() }
        let answer = try await socket.readUntilClosed(timeout: .seconds(8))
        XCTAssertTrue(answer.text.hasPrefix("HTTP/1.1 200"), answer.text)
        XCTAssertEqual(answer.text.components(separatedBy: "HTTP/1.1 ").count - 1, 1, "only the first request was answered")
        XCTAssertTrue(answer.closed)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
    }

    func testAHeadTheParserRefusesIsAnswered400AtOnce() async throws {
        let live = try await startBroker()
        let heads = [
            "obs-fold": "GET /healthz HTTP/1.1\r\nHost: broker\r\nX-Folded: a\r\n b\r\n\r\n",
            "space before the colon": "GET /healthz HTTP/1.1\r\nHost : broker\r\n\r\n",
            "NUL in a value": "GET /healthz HTTP/1.1\r\nHost: bro\u{0}ker\r\n\r\n",
        ]
        for (name, head) in heads {
            let socket = try await RawSocket.connect(port: live.port)
            try await socket.send(head)
            let answer = try await socket.readUntilClosed(timeout: .seconds(2))
            XCTAssertTrue(answer.text.hasPrefix("HTTP/1.1 400"), "\(name): \(answer.text)")
            XCTAssertTrue(answer.closed, "\(name): the socket is closed, not left to the handshake timeout")
        }
    }
}
