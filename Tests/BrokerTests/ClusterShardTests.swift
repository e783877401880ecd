import BrokerClient
import BrokerProtocol
import Foundation
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker

/// The bus is sharded: a node hears a volunteer's positions only while it has a subscriber in the volunteer's
/// shard, and a donor who is the first of their node in a shard still gets `last` and every position after.
final class ClusterShardTests: XCTestCase {
    private let volunteerID = "shard.volunteer@example.org"
    private let donorID = "shard.donor@example.org"

    private func positionsIn(_ node: BrokerProcess) async throws -> Double {
        try await ClusterFixture.metric(#"broker_cluster_events_in_total{kind="position"}"#, of: node) ?? 0
    }

    /// Waits until node `node` has sent `count` events to the bus: a position acknowledged is sent (and stored)
    /// by the node's writer a moment later.
    private func waitUntilSent(_ count: Double, by node: BrokerProcess) async throws {
        try await waitUntil("node sent \(count) events") {
            (try await ClusterFixture.metric("broker_cluster_events_out_total", of: node) ?? 0) >= count
        }
    }

    private func shardsListened(_ node: BrokerProcess) async throws -> Double {
        try await ClusterFixture.metric("broker_cluster_shards_listened", of: node) ?? 0
    }

    func testADonorFirstInTheirShardOnTheirNodeGetsLastFromTheStoreAndEveryPositionAfter() async throws {
        let store = try await PostgresServer.shared().makeDatabase()
        let a = try await startNode("a", store: store)
        let b = try await startNode("b", store: store)
        try await ClusterFixture.put("d-shard", on: a, donor: donorID, volunteer: volunteerID, state: .beingLookedFor)
        let volunteer = try await ClusterFixture.connect(volunteerID, to: a)
        let before = try await volunteer.publishKept(position(metresFromHome: 2_000))
        try await waitUntilSent(1, by: a)
        let shardsOnB = try await shardsListened(b)
        XCTAssertEqual(shardsOnB, 0, "node b has no subscriber, so it listens to no shard")

        // Node b joins the shard for this donor: `last` comes from the store (b never heard that position).
        let donor = try await ClusterFixture.connect(donorID, to: b)
        let subscribed = try await ClusterFixture.subscribe(donor, to: "d-shard")
        XCTAssertEqual(subscribed.last?.position, before, "the donor's last position, read from the store")
        XCTAssertEqual(subscribed.online, true)
        // Published right after the reply, as fast as node a acknowledges: every one arrives, in order.
        var acknowledged: [Position] = []
        for step in 0..<20 { acknowledged.append(try await volunteer.publishKept(position(metresFromHome: 1_900 - Double(step) * 10))) }
        var delivered: [Position] = []
        for _ in acknowledged { delivered.append(try await ClusterFixture.nextPosition(donor).position) }
        XCTAssertEqual(delivered, acknowledged)

        // The donor leaves; node b stops listening to the shard (within a sweep) and hears nothing more.
        await donor.close()
        try await waitUntil("node b left the shard") { try await shardsListened(b) == 0 }
        let heardOnB = try await positionsIn(b)
        let sent = try await ClusterFixture.metric("broker_cluster_events_out_total", of: a) ?? 0
        let whileAway = try await volunteer.publishKept(position(metresFromHome: 1_000))
        try await waitUntilSent(sent + 1, by: a)

        // Back: `last` is the position node b did not hear, and again nothing published after is missed.
        let again = try await ClusterFixture.connect(donorID, to: b)
        let resubscribed = try await ClusterFixture.subscribe(again, to: "d-shard", since: 0)
        XCTAssertEqual(resubscribed.last?.position, whileAway, "the position published while node b was away, from the store")
        let heardOnBAfter = try await positionsIn(b)
        XCTAssertEqual(heardOnBAfter, heardOnB, "node b opened no position of the shard while it was not listening")
        // `since` replays what this node holds, ending with the stored position.
        var backlog: [Position] = []
        for _ in 0..<30 where backlog.last != whileAway { backlog.append(try await ClusterFixture.nextPosition(again).position) }
        XCTAssertEqual(backlog.last, whileAway, "the backlog ends with the stored position: \(backlog)")
        let next = try await volunteer.publishKept(position(metresFromHome: 900))
        let got = try await ClusterFixture.nextPosition(again).position
        XCTAssertEqual(got, next)
        await again.close()
        await volunteer.close()
    }

    func testANodeWithoutASubscriberInAShardReceivesNoneOfItsPositions() async throws {
        let store = try await PostgresServer.shared().makeDatabase()
        let a = try await startNode("a", store: store)
        let b = try await startNode("b", store: store)
        let c = try await startNode("c", store: store)
        try await ClusterFixture.put("d-heard", on: a, donor: donorID, volunteer: volunteerID, state: .beingLookedFor)
        let donor = try await ClusterFixture.connect(donorID, to: b)
        _ = try await ClusterFixture.subscribe(donor, to: "d-heard")
        // Node c knows the donation too (it could serve the donor), but nobody subscribed there.
        let donor2 = try await ClusterFixture.connect(donorID, to: c)
        await donor2.close()

        let volunteer = try await ClusterFixture.connect(volunteerID, to: a)
        for step in 0..<5 {
            let fix = try await volunteer.publishKept(position(metresFromHome: 1_500 - Double(step) * 100))
            let delivered = try await ClusterFixture.nextPosition(donor).position
            XCTAssertEqual(delivered, fix)
        }
        // A donation change after the positions: once node c applied it, it heard everything sent before on the
        // same session (one channel before sharding: in order).
        try await ClusterFixture.put("d-other", on: a, donor: "other@example.org", volunteer: "other.volunteer@example.org", state: .beingLookedFor)
        try await waitUntil("node c heard the later donation change") {
            (try await ClusterFixture.metric(#"broker_cluster_events_in_total{kind="donation"}"#, of: c) ?? 0) >= 2
        }
        let onB = try await positionsIn(b)
        let onC = try await positionsIn(c)
        XCTAssertEqual(onB, 5, "node b, with the donor, opened the five positions")
        XCTAssertEqual(onC, 0, "node c, without a subscriber in the shard, opened none")
        let shardsOnB = try await shardsListened(b)
        let shardsOnC = try await shardsListened(c)
        XCTAssertEqual(shardsOnB, 1)
        XCTAssertEqual(shardsOnC, 0)
        await donor.close()
        await volunteer.close()
    }
}
