import BrokerProtocol
import XCTest

@testable import BrokerCore

/// A fix is judged by when it was taken, not when it arrives: one taken before its donation's trackable
/// window opened, or during a pause, or too long ago, reaches the donor by no path (live, `last`, `since`).
final class PositionWindowTests: XCTestCase {
    private let volunteerID = "vol@example.org"
    private let donorID = "donor@example.org"
    private let start: Int64 = 1_795_000_000_000
    private var fixture: HubFixture!
    private var clock: ManualClock { fixture.clock }
    private var hub: Hub { fixture.hub }

    override func setUp() {
        fixture = HubFixture()
        XCTAssertEqual(clock.now, start)
    }

    private func move(_ id: String = "d-1", to state: DonationState, donor: String? = nil) {
        fixture.move(id, to: state, donor: donor)
    }

    private func publish(takenAt timestamp: Int64, metres: Double = 900) -> Hub.PublishOutcome? {
        try? hub.publish(as: volunteerID, position: position(metresFromHome: metres, timestamp: timestamp)).get()
    }

    /// What a donor who subscribes now with `since: 0` is given: the `last` of `subscribed`, and the backlog.
    private func whatANewSubscriberSees(_ donation: String = "d-1") throws -> (last: ServerFrame.KeptPosition?, backlog: [ServerFrame]) {
        let (donor, sink) = fixture.connect()
        XCTAssertNil(hub.subscribe(donor, .init(target: .donation(donation), since: 0)))
        let frames = try sink.frames()
        guard case .subscribed(let subscribed) = frames.first else {
            XCTFail("expected subscribed, got \(frames)")
            return (nil, [])
        }
        return (subscribed.last, Array(frames.dropFirst()))
    }

    func testAFixTakenTwoMinutesBeforeTheTripBeganReachesNobody() throws {
        move(to: .created)
        clock.advance(by: 180_000)
        move(to: .beingLookedFor)
        let (watchingConnection, watching) = fixture.connect()
        XCTAssertNil(hub.subscribe(watchingConnection, .init(target: .donation("d-1"))))
        _ = try watching.frames()

        // The phone queued a fix two minutes before BEING-LOOKED-FOR and sends it now.
        let stale = publish(takenAt: clock.now - 120_000)
        XCTAssertEqual(stale, Hub.PublishOutcome(seq: nil, watchers: 0, untracked: .beforeWindow))
        XCTAssertEqual(try watching.frames().map(\.type), ["presence"], "no position, live")
        let seen = try whatANewSubscriberSees()
        XCTAssertNil(seen.last, "nor as last")
        XCTAssertEqual(seen.backlog.map(\.type), [], "nor through since")
        XCTAssertEqual(fixture.metrics.counts.untracked[.beforeWindow], 1)

        // The next fresh fix does reach the donor.
        clock.advance(by: 20_000)
        let fresh = publish(takenAt: clock.now - 500)
        XCTAssertNotNil(fresh?.seq)
        XCTAssertEqual(fresh?.watchers, 2)
        XCTAssertEqual(try watching.frames().map(\.type), ["position"])
    }

    func testAFixTakenDuringThePausePublishedAfterTheTripResumedReachesNobody() throws {
        move(to: .beingLookedFor)
        clock.advance(by: 60_000)
        XCTAssertNotNil(publish(takenAt: clock.now)?.seq, "a fix on the way to the donor")
        move(to: .pickedByVolunteer)
        clock.advance(by: 30_000)
        let takenDuringThePause = clock.now
        clock.advance(by: 300_000)
        move(to: .beingTakenTo)
        let (watchingConnection, watching) = fixture.connect()
        XCTAssertNil(hub.subscribe(watchingConnection, .init(target: .donation("d-1"), since: 0)))
        _ = try watching.frames()
        clock.advance(by: 1_000)

        XCTAssertEqual(publish(takenAt: takenDuringThePause)?.untracked, .beforeWindow)
        // A fix from the first leg is not of this window either: that leg's positions were forgotten at the pause.
        XCTAssertEqual(publish(takenAt: start + 60_000)?.untracked, .beforeWindow)
        XCTAssertEqual(try watching.frames().map(\.type), [], "the volunteer was online already: no frame at all")
        let seen = try whatANewSubscriberSees()
        XCTAssertNil(seen.last)
        XCTAssertEqual(seen.backlog.map(\.type), [])

        XCTAssertNotNil(publish(takenAt: clock.now)?.seq)
        XCTAssertEqual(try watching.frames().map(\.type), ["position"])
    }

    func testAPhoneClockRunningBehindIsToleratedUpToTheSetting() throws {
        move(to: .beingLookedFor)
        clock.advance(by: 100)
        XCTAssertNotNil(publish(takenAt: clock.now - 2_100)?.seq, "2 s behind the window's opening: within tolerance")
        XCTAssertEqual(publish(takenAt: clock.now - 2_101)?.untracked, .beforeWindow, "a millisecond more is not")
    }

    func testAFixOlderThanTheMaximumAgeIsNeverDeliveredEvenInsideTheWindow() throws {
        move(to: .beingLookedFor)
        clock.advance(by: 30 * 60_000)
        let (watchingConnection, watching) = fixture.connect()
        XCTAssertNil(hub.subscribe(watchingConnection, .init(target: .donation("d-1"))))
        _ = try watching.frames()

        let old = publish(takenAt: clock.now - 600_001)
        XCTAssertEqual(old?.untracked, .tooOld)
        XCTAssertEqual(try watching.frames().map(\.type), ["presence"])
        XCTAssertNil(try whatANewSubscriberSees().last)
        XCTAssertNotNil(publish(takenAt: clock.now - 600_000)?.seq, "exactly the maximum age is still shown")
    }

    func testEachDonationIsJudgedByItsOwnWindow() throws {
        move("d-early", to: .beingLookedFor, donor: "early@example.org")
        clock.advance(by: 60_000)
        let secondOpenedAt = clock.now
        move("d-late", to: .beingLookedFor, donor: "late@example.org")
        clock.advance(by: 1_000)

        let between = publish(takenAt: secondOpenedAt - 30_000)
        XCTAssertNotNil(between?.seq, "kept for the donation whose window was open when it was taken")
        let (earlyConnection, early) = fixture.connect("early@example.org")
        XCTAssertNil(hub.subscribe(earlyConnection, .init(target: .donation("d-early"), since: 0)))
        let (lateConnection, late) = fixture.connect("late@example.org")
        XCTAssertNil(hub.subscribe(lateConnection, .init(target: .donation("d-late"), since: 0)))
        guard case .subscribed(let earlyView) = try early.frames().first,
            case .subscribed(let lateView) = try late.frames().first
        else { return XCTFail("not subscribed") }
        XCTAssertEqual(earlyView.last?.seq, between?.seq)
        XCTAssertNil(lateView.last, "taken before this donation's window opened")
    }

    func testAPositionFromAnotherNodeIsJudgedAgainstThisNodesWindow() throws {
        move(to: .beingLookedFor)
        clock.advance(by: 5_000)
        let (watchingConnection, watching) = fixture.connect()
        XCTAssertNil(hub.subscribe(watchingConnection, .init(target: .donation("d-1"))))
        _ = try watching.frames()
        let tooEarly = position(metresFromHome: 900, timestamp: clock.now - 60_000)
        hub.receiveRemotePosition(channel: volunteerID, seq: 1, position: tooEarly, donations: ["d-1"], viewSeqs: nil, seenAt: clock.now)
        XCTAssertEqual(try watching.frames().map(\.type), ["presence"])
        let fresh = position(metresFromHome: 900, timestamp: clock.now)
        hub.receiveRemotePosition(channel: volunteerID, seq: 2, position: fresh, donations: ["d-1"], viewSeqs: nil, seenAt: clock.now)
        XCTAssertEqual(try watching.frames().map(\.type), ["position"])
    }
}
