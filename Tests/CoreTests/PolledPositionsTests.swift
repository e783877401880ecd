import BrokerProtocol
import XCTest

@testable import BrokerCore

/// A donor reading a volunteer's channel without a connection (the PubNub-compatible long poll): the same gate
/// as a WebSocket `subscribe` by channel, the same history as `since`.
final class PolledPositionsTests: XCTestCase {
    private func seqs(_ polled: Hub.PolledPositions) -> [Int64] { polled.positions.map(\.seq) }

    func testTheDonorReadsThePositionsAfterTheSeqAndNothingTwice() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        var kept: [Int64] = []
        for _ in 0..<3 {
            fixture.clock.advance(by: 1_000)
            kept.append(try XCTUnwrap(try fixture.publish().get().seq))
        }
        let all = try fixture.hub.positions(on: fixture.volunteer, after: 0, for: fixture.donor).get()
        XCTAssertEqual(seqs(all), kept)
        XCTAssertEqual(all.latestVisibleSeq, kept[2])
        XCTAssertTrue(all.tracking)
        let after = try fixture.hub.positions(on: fixture.volunteer, after: kept[0], for: fixture.donor).get()
        XCTAssertEqual(seqs(after), Array(kept[1...]), "only after the seq asked for")
        XCTAssertEqual(seqs(try fixture.hub.positions(on: fixture.volunteer, after: kept[2], for: fixture.donor).get()), [])
    }

    func testAnotherDonorAndAnUnknownChannelGetTheSameRefusal() {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        fixture.publish()
        XCTAssertEqual(fixture.hub.positions(on: fixture.volunteer, after: 0, for: "mallory@example.org"), .failure(Subscriptions.channelRefusal))
        XCTAssertEqual(fixture.hub.positions(on: "nobody@example.org", after: 0, for: fixture.donor), .failure(Subscriptions.channelRefusal))
        XCTAssertEqual(fixture.hub.positions(on: fixture.donor, after: 0, for: fixture.volunteer), .failure(Subscriptions.channelRefusal))
    }

    func testAFixTakenBeforeTheWindowIsNeverRead() throws {
        let fixture = HubFixture()
        fixture.clock.advance(by: 60_000)
        fixture.move(to: .beingLookedFor)
        fixture.clock.advance(by: 1_000)
        XCTAssertEqual(try fixture.publish(takenAt: fixture.clock.now - 30_000).get().untracked, .beforeWindow)
        let polled = try fixture.hub.positions(on: fixture.volunteer, after: 0, for: fixture.donor).get()
        XCTAssertEqual(polled.positions, [])
        XCTAssertNil(polled.latestVisibleSeq)
    }

    func testAPauseShowsNothingNotEvenWhatWasKeptBeforeIt() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        fixture.publish()
        fixture.move(to: .pickedByVolunteer)
        fixture.clock.advance(by: 1_000)
        fixture.publish()
        let polled = try fixture.hub.positions(on: fixture.volunteer, after: 0, for: fixture.donor).get()
        XCTAssertEqual(polled.positions, [])
        XCTAssertNil(polled.latestVisibleSeq, "the seq tells nothing of the volunteer's publishes during the pause")
        XCTAssertFalse(polled.tracking)
    }

    func testADonationThatEndsIsRefusedAtTheNextRead() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingTakenTo)
        fixture.publish()
        XCTAssertEqual(seqs(try fixture.hub.positions(on: fixture.volunteer, after: 0, for: fixture.donor).get()).count, 1)
        fixture.move(to: .delivered)
        XCTAssertEqual(fixture.hub.positions(on: fixture.volunteer, after: 0, for: fixture.donor), .failure(Subscriptions.channelRefusal))
    }

    func testPositionsKeptForAnotherDonationOfTheVolunteerAreNotRead() throws {
        let fixture = HubFixture()
        fixture.move("d-1", to: .beingLookedFor)
        fixture.move("d-2", to: .deliveredByDonor, donor: "other@example.org")
        fixture.publish()
        fixture.move("d-1", to: .pickedByVolunteer)
        fixture.move("d-2", to: .beingTakenTo, donor: "other@example.org")
        fixture.clock.advance(by: 1_000)
        let kept = position(metresFromHome: 900, timestamp: fixture.clock.now)
        XCTAssertNotNil(try fixture.hub.publish(as: fixture.volunteer, position: kept).get().seq)
        XCTAssertEqual(try fixture.hub.positions(on: fixture.volunteer, after: 0, for: "other@example.org").get().positions.map(\.position), [kept])
        XCTAssertEqual(try fixture.hub.positions(on: fixture.volunteer, after: 0, for: fixture.donor).get().positions, [])
    }

    func testAFixKeptForAnotherDonorBeforeThisDonorsWindowOpenedIsNotRead() throws {
        let fixture = HubFixture()
        fixture.move("d-2", to: .beingLookedFor, donor: "other@example.org")
        XCTAssertNotNil(try fixture.publish().get().seq)
        fixture.clock.advance(by: 10_000)
        fixture.move("d-1", to: .beingLookedFor)
        fixture.clock.advance(by: 1_000)
        XCTAssertNotNil(try fixture.publish().get().seq)
        let others = try fixture.hub.positions(on: fixture.volunteer, after: 0, for: "other@example.org").get()
        XCTAssertEqual(others.positions.count, 2)
        let mine = try fixture.hub.positions(on: fixture.volunteer, after: 0, for: fixture.donor).get()
        XCTAssertEqual(mine.positions.map(\.position), others.positions.suffix(1).map(\.position), "only what was kept for this donor's own window")
        XCTAssertEqual(seqs(others), [seqs(mine)[0], seqs(mine)[0] + 1], "each donor under its own number: the other's view counted one more")
        XCTAssertEqual(mine.latestVisibleSeq, seqs(mine).last)
        XCTAssertEqual(try fixture.hub.positions(on: fixture.volunteer, after: .max, for: fixture.donor).get().latestVisibleSeq, seqs(mine).last)
    }
}
