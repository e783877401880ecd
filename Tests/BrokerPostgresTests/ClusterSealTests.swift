import BrokerProtocol
import Foundation
import XCTest

@testable import BrokerCore
@testable import BrokerPostgres
@testable import BrokerStorage
@testable import BrokerTestSupport

/// What the cluster secrets seal: nothing opens for another purpose, another place, or without a secret, and
/// rotation opens what the previous secret sealed.
final class ClusterSealTests: XCTestCase {
    private let old = ClusterKeys(secrets: ["old-secret-0123456789-0123456789-0123"])
    private let rotated = ClusterKeys(secrets: ["new-secret-0123456789-0123456789-0123", "old-secret-0123456789-0123456789-0123"])
    private let event = ClusterEvent.position(
        origin: "a", channel: "vol@example.org", seq: 42, position: position(metresFromHome: 100), donations: ["d-1"], viewSeqs: nil, seenAt: 1)

    func testASealedEventOpensOnlyForItsPurposeAndChannel() throws {
        let sealed = try event.sealed(with: old, channel: "lb_events")
        XCTAssertEqual(try ClusterEvent(sealed: sealed, keys: old, channel: "lb_events"), event)
        XCTAssertFalse(sealed.contains("vol@example.org") || sealed.contains("d-1"))
        XCTAssertThrowsError(try ClusterEvent(sealed: sealed, keys: old, channel: "lb_events_2"), "moved to another channel")
        XCTAssertThrowsError(try old.open(sealed, for: .heartbeat, context: "lb_events"), "replayed as a heartbeat")
        XCTAssertThrowsError(try old.open(sealed, for: .lastPosition, context: old.channelKey("vol@example.org")), "replayed as a stored position")

        var altered = Array(sealed)
        altered[sealed.count / 2] = altered[sealed.count / 2] == "A" ? "B" : "A"
        XCTAssertThrowsError(try ClusterEvent(sealed: String(altered), keys: old, channel: "lb_events"), "one character changed")
        XCTAssertThrowsError(try ClusterEvent(sealed: #"{"k":"p","n":"x"}"#, keys: old, channel: "lb_events"), "the old clear format")
        let heartbeat = try ClusterEvent.heartbeat(origin: "a", nonce: 7).sealed(with: old, channel: "lb_events")
        XCTAssertEqual(try ClusterEvent(sealed: heartbeat, keys: old, channel: "lb_events"), .heartbeat(origin: "a", nonce: 7))
        XCTAssertThrowsError(try old.open(heartbeat, for: .busEvent, context: "lb_events"), "a heartbeat is no bus event")
    }

    /// Position events are written without `JSONEncoder`: whatever their strings and numbers hold, they open as the
    /// event that was sent, and as JSON hold what `JSONEncoder` wrote for them.
    func testAPositionEventReadsBackAsSentWhateverItsStringsAndNumbers() throws {
        let strings = ["vol@example.org", "", "quote\"back\\slash", "tab\tnew\nline\u{1}\u{1F}\u{7F}", "ñandú 🚚 \u{2028}", String(repeating: "x", count: 300)]
        let positions = [
            Position(lat: -34.6037, lon: -58.3816, accuracy: nil, speed: nil, heading: nil, timestamp: 1_764_000_000_000),
            Position(lat: 90, lon: -180, accuracy: 5.437, speed: 0, heading: 359.9999, timestamp: 0),
            Position(lat: -0.0, lon: 1e-7, accuracy: 1e300, speed: 123456789.125, heading: -0.5, timestamp: 8_000_000_000_000_001),
        ]
        for (index, text) in strings.enumerated() {
            let position = positions[index % positions.count]
            let donations = index % 2 == 0 ? [text, "d-2"] : []
            // Events from a sender that numbers each donation's view, and from one that does not.
            let viewSeqs = index % 3 == 0 ? nil : donations.indices.map { Int64($0) * 7 - 1 }
            let event = ClusterEvent.position(
                origin: text, channel: text, seq: Int64(index) - 3, position: position, donations: donations, viewSeqs: viewSeqs, seenAt: Int64.max)
            XCTAssertEqual(try ClusterEvent(sealed: try event.sealed(with: old, channel: "lb_events_s1"), keys: old, channel: "lb_events_s1"), event)
            let written = try JSONSerialization.jsonObject(with: try event.plaintext()) as? NSDictionary
            let encoded = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(PositionWire(
                k: "p", n: text, c: text, s: Int64(index) - 3, p: position, t: donations, v: viewSeqs, ls: Int64.max))) as? NSDictionary
            XCTAssertEqual(written, encoded, "\(text.debugDescription)")
        }
    }

    /// What `JSONEncoder` wrote for a position event before it was written directly.
    private struct PositionWire: Encodable {
        var k: String
        var n: String
        var c: String
        var s: Int64
        var p: Position
        var t: [String]
        var v: [Int64]?
        var ls: Int64
    }

    func testRotationOpensWhatTheOldSecretSealedAndSealsWithTheNewOne() throws {
        let fromOld = try event.sealed(with: old, channel: "lb_events")
        XCTAssertEqual(try ClusterEvent(sealed: fromOld, keys: rotated, channel: "lb_events"), event, "a node that already has the new secret")
        let fromNew = try event.sealed(with: rotated, channel: "lb_events")
        XCTAssertThrowsError(try ClusterEvent(sealed: fromNew, keys: old, channel: "lb_events"), "sealed with the new secret, first")
        XCTAssertThrowsError(try ClusterEvent(sealed: fromNew, keys: ClusterKeys(secrets: ["other-0123456789-0123456789-0123456"]), channel: "lb_events"))
    }

    func testAStoredLastPositionIsKeyedByAKeyedHashAndCannotMoveToAnotherRow() throws {
        let last = LastPosition(channel: "vol@example.org", seq: 9, position: position(metresFromHome: 50), donations: ["d-1"], viewSeqs: [3], seenAt: 5)
        let (key, sealed) = try SealedLastPosition.seal(last, keys: old)
        XCTAssertEqual(try SealedLastPosition.open(channelKey: key, sealed: sealed, keys: rotated), last)
        XCTAssertFalse(key.contains("vol") || sealed.contains("vol@example.org") || sealed.contains("d-1"))
        XCTAssertEqual(key.count, 64)
        XCTAssertEqual(rotated.channelKeys("vol@example.org").last, key, "the old secret's key is still found for deletion")
        XCTAssertNotEqual(rotated.channelKey("vol@example.org"), key, "each secret keys channels differently")
        let other = old.channelKey("someone@example.org")
        XCTAssertThrowsError(try SealedLastPosition.open(channelKey: other, sealed: sealed, keys: old), "moved to another volunteer's row")
    }

    /// The writer seals a position's bus plaintext as its stored row: it must open as the row it stands for, and only
    /// in that row.
    func testAStoredRowMadeOfAPositionEventsPlaintextOpensAsThatPosition() throws {
        let key = old.channelKey("vol@example.org")
        let sealed = try SealedLastPosition.seal(positionEvent: try event.plaintext(), channelKey: key, keys: old)
        guard case .position(_, _, _, let kept, _, _, _) = event else { return XCTFail("the event is a position") }
        let expected = LastPosition(channel: "vol@example.org", seq: 42, position: kept, donations: ["d-1"], viewSeqs: nil, seenAt: 1)
        XCTAssertEqual(try SealedLastPosition.open(channelKey: key, sealed: sealed, keys: rotated), expected)
        XCTAssertFalse(sealed.contains("vol@example.org") || sealed.contains("d-1"))
        XCTAssertThrowsError(try SealedLastPosition.open(channelKey: old.channelKey("someone@example.org"), sealed: sealed, keys: old), "moved to another row")
        XCTAssertThrowsError(try ClusterEvent(sealed: sealed, keys: old, channel: key), "a stored row is no bus event")
        let claimingAnother = try SealedLastPosition.seal(positionEvent: try event.plaintext(), channelKey: old.channelKey("someone@example.org"), keys: old)
        XCTAssertThrowsError(
            try SealedLastPosition.open(channelKey: old.channelKey("someone@example.org"), sealed: claimingAnother, keys: old),
            "a row whose content names another channel than its key")
    }

    /// Rows already stored are found by this key, so its text never changes: lowercase hex of HMAC-SHA256 under the
    /// HKDF-derived key (computed apart from the broker with Python's hmac and hashlib).
    func testAChannelsStoredRowKeyIsThePinnedLowercaseHexOfItsKeyedHash() {
        XCTAssertEqual(old.channelKey("vol@example.org"), "f4464475d840bf0f825bc162f3a4009939ebd48aafdc7ce8f0efb11647775f2b")
        XCTAssertEqual([UInt8]([0x00, 0x0f, 0xa0, 0xff]).lowercaseHex, "000fa0ff")
        XCTAssertEqual([UInt8]().lowercaseHex, "")
    }

    /// The listener was away while another node committed revision 10, and this node applied its own 11 meanwhile:
    /// catch-up must start below 10, not after 11.
    func testRevisionsKnowWhichWereSeenNotOnlyTheHighest() {
        var revisions = AppliedRevisions()
        revisions.loaded(upTo: 9)
        revisions.record(11, for: "d-2", ended: false, now: 0)
        XCTAssertEqual(revisions.highest, 11)
        XCTAssertEqual(revisions.complete, 9, "10 was never seen: catch up after 9")
        XCTAssertTrue(revisions.hasGap(below: 11))
        revisions.seen(10)
        XCTAssertEqual(revisions.complete, 11, "10 and 11 seen: nothing missing")
        revisions.seen(14)
        XCTAssertTrue(revisions.hasGap(below: 14), "12 and 13 skipped")
        revisions.accounted(through: 14)
        XCTAssertEqual(revisions.complete, 14)
        XCTAssertFalse(revisions.hasGap(below: 15))
    }
}
