import Foundation
import XCTest

@testable import BrokerTestSupport

/// HEAD on a GET route answers as GET without the body (RFC 9110 §9.3.2): the same status and headers, including
/// Content-Length, and no byte after them. Monitors check /healthz this way.
final class HeadRequestTests: XCTestCase {
    private func exchange(_ port: Int, _ method: String, _ path: String) async throws -> (head: String, body: String) {
        let text = try await UpgradeHostileHeadTests.everything(
            port: port, UpgradeHostileHeadTests.bytes("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"), wait: 2)
        let parts = text.components(separatedBy: "\r\n\r\n")
        return (parts[0], parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    private func headers(_ head: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in head.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }

    func testHeadOnEveryGetRouteAnswersAsGetWithoutABody() async throws {
        try await withLiveBroker { live in
            try await live.put("d-1", state: .beingTakenTo)
            for path in ["/healthz", "/metrics", "/openapi.yaml", "/track/d-1", "/time/0", "/assets/tracking-page.js"] {
                let get = try await exchange(live.port, "GET", path)
                let head = try await exchange(live.port, "HEAD", path)
                let status = get.head.split(separator: "\r\n").first.map(String.init) ?? ""
                XCTAssertTrue(status.hasPrefix("HTTP/1.1 200"), "GET \(path): \(status)")
                XCTAssertEqual(head.head.split(separator: "\r\n").first.map(String.init), status, "HEAD \(path): \(head.head)")
                XCTAssertEqual(head.body, "", "HEAD \(path) sent a body")
                let getHeaders = headers(get.head)
                let headHeaders = headers(head.head)
                XCTAssertEqual(headHeaders["content-type"], getHeaders["content-type"], "HEAD \(path)")
                if path != "/metrics" && path != "/time/0" {
                    // The other answers change between two requests; these do not.
                    XCTAssertEqual(headHeaders["content-length"], getHeaders["content-length"], "HEAD \(path)")
                }
            }
        }
    }

    func testHeadIsRefusedWhereAGetChangesSomething() async throws {
        try await withLiveBroker { live in
            // PubNub's GET publish stores a position: a HEAD, which must be safe, does not.
            let head = try await exchange(live.port, "HEAD", "/publish/p/s/0/vol@example.org/0/%7B%22lat%22%3A1%2C%22lng%22%3A2%7D")
            XCTAssertTrue(head.head.hasPrefix("HTTP/1.1 405"), head.head)
            XCTAssertEqual(headers(head.head)["allow"], "GET")
        }
    }
}
