import BrokerClient
import BrokerProtocol
import Foundation
import Logging
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import BrokerWebSocket
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
            let seq = try await volunteer.publishKept(position(metresFromHome: 1_500 - Double(step) * 100))
            let delivered = try await ClusterFixture.nextPosition(donor).position
            XCTAssertEqual(delivered, seq)
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

    func testShardsAreStableKeyedAndSpreadAndBoundIntoTheSeal() throws {
        let keys = ClusterKeys(secrets: ["shard-secret-0123456789-0123456789-01"])
        let again = ClusterKeys(secrets: ["shard-secret-0123456789-0123456789-01"])
        let other = ClusterKeys(secrets: ["other-secret-0123456789-0123456789-01"])
        let volunteers = (0..<2_000).map { "volunteer\($0)@example.org" }
        XCTAssertEqual(volunteers.map { keys.shards(of: $0) }, volunteers.map { again.shards(of: $0) }, "the same shard in every process")
        XCTAssertNotEqual(volunteers.map { keys.shards(of: $0) }, volunteers.map { other.shards(of: $0) }, "keyed by the secret")
        // A fixed value, so a change of the hash (which would split a cluster in the middle of an upgrade) fails here.
        XCTAssertEqual(keys.shards(of: "vol@example.org"), [Self.knownShard])
        var perShard = [Int](repeating: 0, count: ClusterShards.count)
        for volunteer in volunteers { perShard[keys.shards(of: volunteer)[0]] += 1 }
        XCTAssertGreaterThan(perShard.min() ?? 0, 10, "spread over every shard: \(perShard)")
        // During a rotation a volunteer is on each secret's shard; both nodes of a rotation share one.
        let rotating = ClusterKeys(secrets: ["other-secret-0123456789-0123456789-01", "shard-secret-0123456789-0123456789-01"])
        XCTAssertTrue(rotating.shards(of: "vol@example.org").contains(Self.knownShard))
        // A position sealed for its shard's channel does not open on another channel.
        let event = ClusterEvent.position(
            origin: "a", channel: "vol@example.org", seq: 1, position: position(metresFromHome: 100), donations: ["d"], viewSeqs: [5], seenAt: 1)
        let sealed = try event.sealed(with: keys, channel: ClusterShards.channel(Self.knownShard))
        XCTAssertEqual(try ClusterEvent(sealed: sealed, keys: keys, channel: ClusterShards.channel(Self.knownShard)), event)
        XCTAssertThrowsError(try ClusterEvent(sealed: sealed, keys: keys, channel: ClusterShards.channel((Self.knownShard + 1) % ClusterShards.count)))
        XCTAssertThrowsError(try ClusterEvent(sealed: sealed, keys: keys, channel: PostgresDonationStore.eventChannel))
    }

    func testAShardIsNotLeftWhileASubscriptionIsAdmittedDuringTheCount() {
        let interest = ShardInterest(keys: ClusterKeys(secrets: ["shard-secret-0123456789-0123456789-01"]))
        let connection = ClientConnection(id: 1, identity: "donor@example.org", expiresAt: .max, sink: Outbox(limit: 65_536), logger: Logger(label: "test"))
        let waiting = ShardInterest.Pending(
            waiting: .init(connection: connection, request: .init(id: "s", target: .donation("d")), channel: "vol@example.org", donation: "d"),
            shards: interest.shards(of: "vol@example.org"))
        XCTAssertFalse(interest.admit(waiting), "a shard not listened to: the subscription waits")
        XCTAssertEqual(interest.wanted(), [Self.knownShard])
        XCTAssertEqual(interest.leave(keeping: [], unchangedSince: interest.admissionCounts()), [], "never left while one waits")
        XCTAssertEqual(interest.joined(Self.knownShard).map(\.waiting.request.id), ["s"], "answered once joined")
        XCTAssertTrue(interest.admit(waiting), "listened to: subscribed at once")

        // The sweep counts no subscriber, but one was admitted after it took the admission counts: the shard stays.
        let before = interest.admissionCounts()
        XCTAssertTrue(interest.admit(waiting))
        XCTAssertEqual(interest.leave(keeping: [], unchangedSince: before), [])
        XCTAssertEqual(interest.wanted(), [Self.knownShard])
        // Counted again with nothing admitted meanwhile and no subscriber: left, and the next subscription waits.
        XCTAssertEqual(interest.leave(keeping: [], unchangedSince: interest.admissionCounts()), [Self.knownShard])
        XCTAssertEqual(interest.wanted(), [])
        XCTAssertFalse(interest.admit(waiting))
        // Unsubscribed before the answer: withdrawn, so joining answers nobody.
        XCTAssertNil(interest.withdraw(connection: 2, channel: nil, donation: "d"), "another connection's")
        XCTAssertEqual(interest.withdraw(connection: 1, channel: nil, donation: "d")?.waiting.channel, "vol@example.org")
        XCTAssertEqual(interest.joined(Self.knownShard).count, 0)
        // A shard with subscribers is kept.
        XCTAssertEqual(interest.leave(keeping: [Self.knownShard], unchangedSince: interest.admissionCounts()), [])
    }

    /// The shard of `vol@example.org` under the test secret, computed apart from the broker (Python's hmac and
    /// HKDF as RFC 5869 gives it: HMAC-SHA256 under the HKDF key, first 8 bytes big-endian, modulo 64).
    private static let knownShard = 23
}
