import BrokerProtocol
import XCTest

@testable import BrokerCore

/// What a donor can read from the seq numbers it receives, tried as the attacker: two donors and one volunteer,
/// a pause, and the numbers compared between a world where the volunteer published for the other donor meanwhile
/// and one where it did not. The seqs a donor sees may depend only on what happened inside its own window.
final class SeqSecrecyTests: XCTestCase {
    private let other = "other@example.org"
    private let late = "late@example.org"

    /// The seqs the donors saw, in a scenario where the volunteer publishes `forOthers` fixes kept for another donor
    /// only: `forOthers / 2` before the first donor's window opens, the rest during its pause.
    private func seqsSeen(forOthers: Int) throws -> (beforePause: Int64, afterPause: Int64, lateFirst: Int64) {
        let fixture = HubFixture()
        let clock = fixture.clock
        fixture.move("d-other", to: .beingLookedFor, donor: other)
        for _ in 0..<(forOthers / 2) {
            clock.advance(by: 1_000)
            fixture.publish()
        }
        clock.advance(by: 30_000 - Int64(forOthers / 2) * 1_000)
        fixture.move("d-1", to: .beingLookedFor)
        let (_, donor) = try fixture.watcher(of: "d-1")
        clock.advance(by: 1_000)
        fixture.publish()
        let beforePause = try XCTUnwrap(seqs(try donor.frames()).last)
        fixture.move("d-1", to: .pickedByVolunteer)
        for _ in 0..<(forOthers - forOthers / 2) {
            clock.advance(by: 1_000)
            fixture.publish()
        }
        clock.advance(by: 60_000 - Int64(forOthers - forOthers / 2) * 1_000)
        fixture.move("d-1", to: .beingTakenTo)
        clock.advance(by: 1_000)
        fixture.publish()
        let afterPause = try XCTUnwrap(seqs(try donor.frames()).last)
        // A third donor whose window opens later: its first seq must not count what was kept before it.
        clock.advance(by: 5_000)
        fixture.move("d-late", to: .beingLookedFor, donor: late)
        let (_, lateDonor) = try fixture.watcher(of: "d-late", late)
        clock.advance(by: 1_000)
        fixture.publish()
        let lateFirst = try XCTUnwrap(seqs(try lateDonor.frames()).first)
        return (beforePause, afterPause, lateFirst)
    }

    private func seqs(_ frames: [ServerFrame]) -> [Int64] {
        frames.compactMap { if case .position(let update) = $0 { update.seq } else { nil } }
    }

    func testTheJumpOverAPauseTellsNothingOfWhatWasKeptForOthers() throws {
        let quiet = try seqsSeen(forOthers: 0)
        let busy = try seqsSeen(forOthers: 20)
        XCTAssertEqual(busy.afterPause - busy.beforePause, quiet.afterPause - quiet.beforePause, "the jump counts the other donor's fixes")
        XCTAssertEqual(busy.beforePause, quiet.beforePause, "the first seq counts fixes kept before this donor's window")
    }

    func testTheFirstSeqOfALateDonorTellsNothingOfWhatCameBefore() throws {
        let quiet = try seqsSeen(forOthers: 0)
        let busy = try seqsSeen(forOthers: 20)
        XCTAssertEqual(busy.lateFirst, quiet.lateFirst, "a late donor's first seq counts what was kept for others before")
    }

    func testSeqsStillGrowForEachDonorSoSinceRecovers() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        let (connection, donor) = try fixture.watcher()
        var seen: [Int64] = []
        for _ in 0..<5 {
            fixture.publish()  // the same millisecond: the seq still grows
            seen += seqs(try donor.frames())
        }
        fixture.clock.advance(by: 1_000)
        fixture.publish()
        seen += seqs(try donor.frames())
        XCTAssertEqual(seen.count, 6)
        XCTAssertEqual(seen, seen.sorted())
        XCTAssertEqual(Set(seen).count, seen.count)
        // A reconnect with `since` gets exactly what came after.
        fixture.hub.disconnect(connection)
        let (again, sink) = fixture.connect()
        XCTAssertNil(fixture.hub.subscribe(again, .init(target: .donation("d-1"), since: seen[2])))
        XCTAssertEqual(seqs(try sink.frames()), Array(seen[3...]))
    }
}
