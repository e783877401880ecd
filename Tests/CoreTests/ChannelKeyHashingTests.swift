import XCTest

@testable import BrokerCore

/// The registry's channel key hands dictionaries its own `_rawHashValue(seed:)`: it must keep `Hashable`'s contract
/// (equal keys, equal hashes, for every seed), and channel names an attacker picks must not pile into one bucket
/// or one shard more than the standard library's own hashing of the same names would.
final class ChannelKeyHashingTests: XCTestCase {
    private typealias Key = ChannelRegistry.Key

    func testKeysEqualByNameHashEquallyForEverySeed() {
        let seeds = [0, 1, -1, Int.min, Int.max, 0x5bd1_e995] + (0..<64).map { _ in Int.random(in: .min ... .max) }
        for name in ["vol@example.org", "", "watch-link d-1", "é", "e\u{301}", String(repeating: "x", count: 254)] {
            // One key made from the name, one with the hash a connection keeps (`ClientConnection.channelHash`).
            let looked = Key(name)
            let kept = Key(name, hash: Key.hash(of: name))
            XCTAssertEqual(looked, kept)
            XCTAssertEqual(looked.hashValue, kept.hashValue, name)
            for seed in seeds {
                XCTAssertEqual(looked._rawHashValue(seed: seed), kept._rawHashValue(seed: seed), "\(name), seed \(seed)")
            }
        }
    }

    func testAKeysHashIsTheStandardLibrarysSeededHashOfItsName() {
        // Seeded per process: what keeps names that collide from being chosen from outside.
        for name in ["vol@example.org", "donor@example.org", "a", ""] {
            XCTAssertEqual(Key.hash(of: name), name.hashValue, name)
        }
    }

    func testEqualityIsTheNamesAndFollowsCanonicalEquivalenceAsStringsDo() {
        // Swift strings compare by canonical equivalence, and so must the keys' hashes.
        XCTAssertEqual(Key("e\u{301}"), Key("é"))
        XCTAssertEqual(Key("e\u{301}")._rawHashValue(seed: 42), Key("é")._rawHashValue(seed: 42))
        XCTAssertNotEqual(Key("vol@example.org"), Key("Vol@example.org"))
    }

    func testADictionaryOfManyKeysFindsAddsAndRemovesEachOne() {
        let names = (0..<20_000).map { "volunteer-\($0)@example.org" }
        var channels: [Key: Int] = [:]
        for (index, name) in names.enumerated() { channels[Key(name)] = index }
        XCTAssertEqual(channels.count, names.count)
        for (index, name) in names.enumerated() {
            XCTAssertEqual(channels[Key(name, hash: Key.hash(of: name))], index)
        }
        for name in names where name.hasPrefix("volunteer-1") { channels.removeValue(forKey: Key(name)) }
        let kept = names.filter { !$0.hasPrefix("volunteer-1") }
        XCTAssertEqual(channels.count, kept.count)
        XCTAssertNil(channels[Key("volunteer-1@example.org")])
        XCTAssertEqual(Set(kept.map(Key.init)).count, kept.count)
        XCTAssertNil(channels[Key("volunteer-20000@example.org")])
    }

    func testNamesAnAttackerPicksCollideInBucketsNoMoreThanTheStandardLibrarysHashing() {
        // Names as a flood would make them: one prefix, a counter; and names that differ in one byte.
        let floods = [
            (0..<4_096).map { "attacker+\($0)@example.org" },
            (0..<4_096).map { String(repeating: "a", count: 200) + String($0, radix: 2) },
        ]
        let bucketBits = 13
        let buckets = 1 << bucketBits
        for names in floods {
            for seed in [0, 1, Int.random(in: .min ... .max)] {
                let keys = occupancy(names.map { Key($0)._rawHashValue(seed: seed) }, buckets: buckets)
                let strings = occupancy(names.map { $0._rawHashValue(seed: seed) }, buckets: buckets)
                // 4,096 names in 8,192 buckets: about 870 land in a taken bucket, give or take some 20; the
                // fullest bucket holds 5 or 6.
                XCTAssertLessThanOrEqual(keys.collisions, strings.collisions + strings.collisions / 5, "seed \(seed)")
                XCTAssertLessThanOrEqual(keys.fullest, 12, "seed \(seed)")
            }
        }
    }

    func testNamesAnAttackerPicksSpreadOverTheShards() {
        // The registry's 64 shards are picked by the name's hash alone: 6,400 names, about 100 a shard.
        let names = (0..<6_400).map { "attacker+\($0)@example.org" }
        var perShard = [Int](repeating: 0, count: 64)
        for name in names { perShard[Int(UInt(bitPattern: Key(name).hash) % 64)] += 1 }
        XCTAssertLessThanOrEqual(perShard.max() ?? 0, 170, "\(perShard)")
        XCTAssertGreaterThanOrEqual(perShard.min() ?? 0, 40, "\(perShard)")
    }

    /// How many hashes land in a bucket already taken, and the most any bucket takes, with `buckets` (a power of
    /// two) addressed by the low bits as the standard library's dictionaries address them.
    private func occupancy(_ hashes: [Int], buckets: Int) -> (collisions: Int, fullest: Int) {
        var counts = [Int](repeating: 0, count: buckets)
        var collisions = 0
        for hash in hashes {
            let bucket = hash & (buckets - 1)
            if counts[bucket] > 0 { collisions += 1 }
            counts[bucket] += 1
        }
        return (collisions, counts.max() ?? 0)
    }
}
