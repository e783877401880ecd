import XCTest

@testable import PubNubCompatibility

/// Where several-channel subscribes stand: kept per identity, so that nobody's subscribes push out anyone
/// else's timetoken.
final class PubNubCursorsTests: XCTestCase {
    func testATimetokenNamesWhereItsOwnIdentityStoodAndNothingForAnother() {
        let cursors = PubNubCursors()
        let timetoken = cursors.keep(["a@example.org": 4, "b@example.org": 9], for: "donor@example.org")

        XCTAssertGreaterThanOrEqual(timetoken, PubNubCursors.floor)
        XCTAssertEqual(cursors.seqs(of: timetoken, for: "donor@example.org"), ["a@example.org": 4, "b@example.org": 9])
        XCTAssertNil(cursors.seqs(of: timetoken, for: "someone-else@example.org"))
    }

    func testOneIdentitySubscribingWithoutEndDoesNotForgetAnotherIdentitysTimetoken() {
        let cursors = PubNubCursors(capacity: 1_000)
        let donors = cursors.keep(["a@example.org": 4, "b@example.org": 9], for: "donor@example.org")

        // Another identity's app (or an attacker with a valid token) starts many more several-channel subscribes
        // than the whole store holds.
        for seq in 0..<5_000 {
            _ = cursors.keep(["a@example.org": Int64(seq), "c@example.org": 1], for: "greedy@example.org")
        }

        XCTAssertEqual(cursors.seqs(of: donors, for: "donor@example.org"), ["a@example.org": 4, "b@example.org": 9])
    }

    func testAnIdentityKeepsItsNewestTimetokensAndForgetsItsOldest() {
        let cursors = PubNubCursors()
        let first = cursors.keep(["a@example.org": 1, "b@example.org": 1], for: "donor@example.org")
        var newest: [Int64] = []
        for seq in 2...(PubNubCursors.perIdentity + 1) {
            newest.append(cursors.keep(["a@example.org": Int64(seq), "b@example.org": 1], for: "donor@example.org"))
        }

        XCTAssertNil(cursors.seqs(of: first, for: "donor@example.org"), "the oldest is forgotten (answered as a handshake)")
        for timetoken in newest {
            XCTAssertNotNil(cursors.seqs(of: timetoken, for: "donor@example.org"))
        }
    }

    func testTheStoreIsBoundedWhateverTheNumberOfIdentities() {
        let cursors = PubNubCursors(capacity: 100)
        for index in 0..<1_000 {
            _ = cursors.keep(["a@example.org": 1, "b@example.org": 1], for: "donor\(index)@example.org")
        }

        XCTAssertLessThanOrEqual(cursors.count, 100)
    }
}
