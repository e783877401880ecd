import BrokerCore
import BrokerProtocol
import Logging
import XCTest

@testable import BrokerPostgres
@testable import BrokerTestSupport
@testable import BrokerWebSocket

/// Which bus shard a volunteer is on (keyed by the cluster secret, the same in every process) and when a node
/// joins and leaves a shard, without PostgreSQL: `ClusterShardTests` runs the shards across broker processes.
final class ShardKeysAndInterestTests: XCTestCase {
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
