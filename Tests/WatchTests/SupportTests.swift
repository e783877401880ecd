import BrokerProtocol
import WatchRendering
import XCTest

/// Broker addresses and terminal text (the backoff is the client library's: ClientTests).
final class SupportTests: XCTestCase {
    func testTheBrokerAddressGetsTheWebSocketPath() {
        XCTAssertEqual(BrokerAddress.webSocketURL("ws://127.0.0.1:8080"), "ws://127.0.0.1:8080/v1/ws")
        XCTAssertEqual(BrokerAddress.webSocketURL("ws://127.0.0.1:8080/"), "ws://127.0.0.1:8080/v1/ws")
        XCTAssertEqual(BrokerAddress.webSocketURL("ws://127.0.0.1:8080/v1/ws"), "ws://127.0.0.1:8080/v1/ws")
        XCTAssertEqual(BrokerAddress.webSocketURL(" wss://broker.example.org/v1/ws/ "), "wss://broker.example.org/v1/ws")
        XCTAssertEqual(BrokerAddress.webSocketURL("https://example.org/broker"), "wss://example.org/broker/v1/ws")
        XCTAssertEqual(BrokerAddress.webSocketURL("localhost:8080"), "ws://localhost:8080/v1/ws")
        XCTAssertNil(BrokerAddress.webSocketURL("ftp://example.org"))
        XCTAssertNil(BrokerAddress.webSocketURL(""))
        XCTAssertEqual(BrokerAddress.httpURL(forWebSocketURL: "ws://127.0.0.1:8080/v1/ws"), "http://127.0.0.1:8080/v1/ws")
        XCTAssertEqual(BrokerAddress.httpURL(forWebSocketURL: "wss://example.org/v1/ws"), "https://example.org/v1/ws")
    }

    func testTextWidthTruncationAndWrapping() {
        XCTAssertEqual(TerminalText.columns(of: "abc"), 3)
        XCTAssertEqual(TerminalText.columns(of: "東京"), 4)
        XCTAssertEqual(TerminalText.columns(of: "Córdoba"), 7)
        XCTAssertEqual(TerminalText.truncated("Caritas Palermo", to: 8), "Caritas…")
        XCTAssertEqual(TerminalText.truncated("Caritas Palermo", to: 8, ascii: true), "Carit...")
        XCTAssertEqual(TerminalText.truncated("東京東京", to: 5), "東京…")
        XCTAssertEqual(TerminalText.wrapped("Picked up — waiting for your confirmation", width: 20), ["Picked up — waiting", "for your", "confirmation"])
        XCTAssertEqual(TerminalText.wrapped("abcdefghij", width: 4), ["abcd", "efgh", "ij"])
        XCTAssertEqual(TerminalText.ascii("Av. Córdoba · 183° ±5 m…"), "Av. Cordoba - 183 deg +/-5 m...")
        XCTAssertEqual(TerminalText.sanitized("a\u{1B}[31mb\nc"), "a?[31mb c")
    }
}
