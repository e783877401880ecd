import AsyncHTTPClient
import XCTest

@testable import EventDelivery

/// The text kept for a failed attempt: short, and never the endpoint's path, which is a push subscription's secret.
final class DeliveryFailureTextTests: XCTestCase {
    struct Described: Error, CustomStringConvertible {
        let description: String
    }

    func testTheURLsPathIsReplacedWhereverAnErrorRepeatsIt() {
        let url = "https://push.example:8443/wpush/v2/gAAAAABsecret?x=1"
        let text = DeliveryFailureText.describe(
            Described(description: "TLS handshake with \(url) failed; retried /wpush/v2/gAAAAABsecret"), url: url, timeout: .seconds(10))
        XCTAssertEqual(text, "TLS handshake with https://push.example:8443 failed; retried /…")
    }

    func testALongErrorIsCutTo200Characters() {
        let text = DeliveryFailureText.describe(Described(description: String(repeating: "e", count: 5_000)), url: "https://h/", timeout: .seconds(1))
        XCTAssertEqual(text.count, 200)
        XCTAssertTrue(text.hasSuffix("…"))
    }

    func testTheClientsOwnErrorsAreSaidPlainly() {
        XCTAssertEqual(DeliveryFailureText.describe(HTTPClientError.deadlineExceeded, url: "https://h/", timeout: .seconds(10)), "timed out after 10.0 seconds")
        XCTAssertEqual(DeliveryFailureText.describe(HTTPClientError.connectTimeout, url: "https://h/", timeout: .seconds(10)), "connect timed out")
        XCTAssertEqual(
            DeliveryFailureText.describe(HTTPClientError.remoteConnectionClosed, url: "https://h/", timeout: .seconds(10)),
            "the receiver closed the connection before answering")
    }
}
