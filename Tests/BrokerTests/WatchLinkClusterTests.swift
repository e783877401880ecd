import BrokerClient
import BrokerProtocol
import Foundation
import HTTPTypes
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// Watch links in a cluster: a link made on one node opens the donation on another (the incarnation travels in
/// PostgreSQL with the donation), and dies there when the donation is deleted and created again on the first.
final class WatchLinkClusterTests: XCTestCase {
    private let donorID = "donor@example.org"
    private let volunteerID = "vol@example.org"

    private func put(_ id: String, on node: BrokerProcess, state: DonationState, file: StaticString = #filePath, line: UInt = #line) async throws {
        try await ClusterFixture.put(id, on: node, donor: donorID, volunteer: volunteerID, state: state, file: file, line: line)
    }

    private func mint(_ id: String, on node: BrokerProcess) async throws -> WatchLink {
        let response = try await LiveBroker.backend(port: node.port, .post, "/v1/donations/\(id)/watch-token")
        XCTAssertEqual(response.status, .ok, String(buffer: response.body ?? .init()))
        return try JSONDecoder().decode(WatchLink.self, from: Data(buffer: response.body ?? .init()))
    }

    /// What a plain `GET /v1/ws` with `token` gets: 401 for a refused token, 400 ("WebSocket only") for a good one.
    private func tokenStatus(_ token: String, on node: BrokerProcess) async throws -> HTTPResponse.Status {
        try await LiveBroker.request(port: node.port, .get, "/v1/ws", headers: [.authorization: "Bearer \(token)"]).status
    }

    func testALinkMadeOnOneNodeOpensItsDonationOnAnotherAndDiesWithItThere() async throws {
        let store = try await PostgresServer.shared().makeDatabase()
        let a = try await startNode("a", store: store)
        let b = try await startNode("b", store: store)
        try await put("d-1", on: a, state: .beingLookedFor)
        let link = try await mint("d-1", on: a)

        let watcher = try await BrokerConnection.connect(url: "ws://127.0.0.1:\(b.port)/v1/ws", token: link.token)
        guard case .welcome = try await watcher.next() else { return XCTFail("no welcome") }
        // Node b learns of d-1 through a NOTIFY: retry the subscribe until it has.
        try await waitUntil("node b lets the link watch d-1") {
            try await watcher.send(.subscribe(.init(id: "s", target: .donation("d-1"))))
            if case .subscribed = try await watcher.next() { return true }
            return false
        }

        // Deleted and created again on node a: node b revokes the subscription and the link opens nothing there.
        let deleted = try await LiveBroker.backend(port: a.port, .delete, "/v1/donations/d-1")
        XCTAssertEqual(deleted.status, .noContent)
        try await put("d-1", on: a, state: .created)
        try await put("d-1", on: a, state: .beingLookedFor)
        try await waitUntil("node b revokes the link's subscription") {
            if case .unsubscribed(let end) = try await watcher.next() { return end.reason == .deleted }
            return false
        }
        let onB = try await tokenStatus(link.token, on: b)
        let onA = try await tokenStatus(link.token, on: a)
        XCTAssertEqual(onB, .unauthorized)
        XCTAssertEqual(onA, .unauthorized)
        let fresh = try await mint("d-1", on: a)
        let freshOnB = try await tokenStatus(fresh.token, on: b)
        XCTAssertEqual(freshOnB, .badRequest, "a valid token on a plain GET: 400, not 401")
    }
}
