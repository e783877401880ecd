import BrokerProtocol
import XCTest

@testable import BrokerCore

/// What a donor sees as the donation moves: `since` and `last` within the window only, pause and resume,
/// and nothing once the donation ended, not even what was kept or queued for it.
final class DonationWindowTests: XCTestCase {
    private func positions(_ frames: [ServerFrame]) -> [Int64] {
        frames.compactMap { if case .position(let update) = $0 { update.seq } else { nil } }
    }

    func testSinceReplaysTheKeptPositionsAfterTheSeqAndLastIsTheNewest() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        var seqs: [Int64] = []
        for _ in 0..<3 {
            fixture.clock.advance(by: 1_000)
            seqs.append(try XCTUnwrap(try fixture.publish().get().seq))
        }
        let (connection, sink) = fixture.connect()
        XCTAssertNil(fixture.hub.subscribe(connection, .init(target: .donation("d-1"), since: seqs[0])))
        let frames = try sink.frames()
        guard case .subscribed(let view) = frames.first else { return XCTFail("got \(frames)") }
        XCTAssertEqual(view.last?.seq, seqs[2])
        XCTAssertEqual(positions(frames), [seqs[1], seqs[2]], "only after the seq asked for")
    }

    func testHistoryKeepsOnlyTheConfiguredNumberOfPositions() throws {
        let fixture = HubFixture { $0.historySize = 2 }
        fixture.move(to: .beingLookedFor)
        var seqs: [Int64] = []
        for _ in 0..<4 {
            fixture.clock.advance(by: 1_000)
            seqs.append(try XCTUnwrap(try fixture.publish().get().seq))
        }
        let (connection, sink) = fixture.connect()
        XCTAssertNil(fixture.hub.subscribe(connection, .init(target: .donation("d-1"), since: 0)))
        XCTAssertEqual(positions(try sink.frames()), Array(seqs.suffix(2)))
    }

    func testAPauseIsToldAndNothingOfThePauseReachesTheDonorThenResumeOpensANewWindow() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        let (_, sink) = try fixture.watcher()
        fixture.publish()
        XCTAssertEqual(try sink.frames().map(\.type), ["presence", "position"])

        fixture.move(to: .pickedByVolunteer)
        guard case .state(let paused) = try sink.frames().first else { return XCTFail("no state frame") }
        XCTAssertEqual(paused.state, .pickedByVolunteer)
        fixture.clock.advance(by: 1_000)
        XCTAssertEqual(try fixture.publish().get().untracked, .noTrackableDonation)
        XCTAssertEqual(try sink.frames(), [], "nothing during the pause")

        fixture.clock.advance(by: 1_000)
        fixture.move(to: .beingTakenTo)
        XCTAssertEqual(try sink.frames().map(\.type), ["state", "presence"], "the resume, then presence, untold during the pause")
        fixture.clock.advance(by: 1_000)
        XCTAssertNotNil(try fixture.publish().get().seq)
        XCTAssertEqual(try sink.frames().map(\.type), ["position"], "the new window is open")
    }

    func testAPauseDropsThePositionsStillQueuedForTheDonor() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        let (_, sink) = try fixture.watcher()
        fixture.publish()
        // The donor has not read the position yet when the volunteer picks the donation up.
        fixture.move(to: .pickedByVolunteer)
        XCTAssertEqual(try sink.frames().map(\.type), ["presence", "state"], "the queued position is not sent after the window closed")
    }

    func testRevocationPurgesWhatWasKeptAndWhatWasQueued() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        let (_, sink) = try fixture.watcher()
        fixture.publish()
        fixture.move(to: .delivered)
        let frames = try sink.frames()
        XCTAssertEqual(frames.map(\.type), ["presence", "unsubscribed"], "no position of the ended donation is sent")
        guard case .unsubscribed(let end) = frames.last else { return }
        XCTAssertEqual(end.reason, .delivered)

        // Made trackable again under the same id: nothing of the old window is kept for it.
        fixture.clock.advance(by: 1_000)
        fixture.move(to: .beingLookedFor)
        let (connection, again) = fixture.connect()
        XCTAssertNil(fixture.hub.subscribe(connection, .init(target: .donation("d-1"), since: 0)))
        let seen = try again.frames()
        guard case .subscribed(let view) = seen.first else { return XCTFail("got \(seen)") }
        XCTAssertNil(view.last)
        XCTAssertEqual(positions(seen), [])
    }

    func testAConflatedPositionOfARevokedDonationDoesNotSurviveInTheQueue() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        fixture.publish()
        let (_, sink) = try fixture.watcher(limit: fixture.positionFrameSize * 5 / 2)
        for _ in 0..<3 {
            fixture.clock.advance(by: 1_000)
            fixture.publish()
        }
        XCTAssertEqual(fixture.metrics.counts.conflated, 1, "the queue is full and the newest position took an older one's place")
        fixture.move(to: .cancelled)
        XCTAssertEqual(try sink.frames().map(\.type), ["unsubscribed"])
    }

    func testAVolunteerChangeRevokesTheOldChannelsWatchers() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        let (connection, sink) = try fixture.watcher()
        fixture.move(to: .beingLookedFor, volunteer: "other@example.org")
        guard case .unsubscribed(let end) = try sink.frames().first else { return XCTFail("not revoked") }
        XCTAssertEqual(end.reason, .volunteerChanged)
        XCTAssertEqual(connection.subscriptionCount, 0)
        fixture.clock.advance(by: 1_000)
        XCTAssertEqual(try fixture.publish().get().untracked, .noTrackableDonation, "the old volunteer's fixes reach nobody")
    }
}
