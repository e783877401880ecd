import BrokerClient
import BrokerProtocol
import XCTest

/// The watcher's reducer: what each frame becomes for the app, with seqs deduplicated and ordered.
final class DonationTrackerTests: XCTestCase {
    private let channel = "vol@example.org"

    private func subscribed(
        state: DonationState = .beingLookedFor, tracking: Bool = true, last: Int64? = nil, online: Bool = true
    ) -> ServerFrame.Subscribed {
        ServerFrame.Subscribed(
            re: "s1", channel: channel, donation: "d-1", state: state, tracking: tracking, destination: tracking ? .home : nil,
            home: Home(lat: -34.6, lon: -58.4, label: nil), institution: nil,
            last: last.map { .init(seq: $0, position: fix($0)) }, online: online)
    }

    private func fix(_ seq: Int64) -> Position {
        Position(lat: -34.6, lon: -58.4, accuracy: 5, speed: 3, heading: 0, timestamp: 1_000_000 + seq * 1000)
    }

    private func position(_ seq: Int64) -> ServerFrame {
        .position(.init(channel: channel, seq: seq, position: fix(seq)))
    }

    private func seqs(_ events: [DonationEvent]) -> [Int64] {
        events.compactMap { if case .position(let seq, _) = $0 { seq } else { nil } }
    }

    func testTheFirstSubscriptionWithoutAPositionSaysItIsWaiting() {
        var tracker = DonationTracker()
        let events = tracker.subscribed(subscribed(), since: nil)
        XCTAssertEqual(events.count, 2)
        guard case .subscribed(let facts) = events.first else { return XCTFail("\(events)") }
        XCTAssertEqual(facts.donation, "d-1")
        XCTAssertEqual(events.last, .waitingForFirstPosition)
    }

    func testLastIsShownAtOnceWhenNothingWasSeenBefore() {
        var tracker = DonationTracker()
        XCTAssertEqual(seqs(tracker.subscribed(subscribed(last: 5), since: nil)), [5])
        XCTAssertEqual(tracker.highestSeq, 5)
    }

    func testRepeatedAndOlderSeqsAreDroppedSoPositionsRiseStrictly() {
        var tracker = DonationTracker()
        _ = tracker.subscribed(subscribed(), since: nil)
        var yielded: [Int64] = []
        for seq: Int64 in [1, 2, 2, 3, 1, 5, 4, 5, 6] { yielded += seqs(tracker.apply(position(seq))) }
        XCTAssertEqual(yielded, [1, 2, 3, 5, 6])
    }

    func testAfterAReconnectTheBacklogFillsTheGapAndLastIsNotTakenEarly() {
        var tracker = DonationTracker()
        _ = tracker.subscribed(subscribed(), since: nil)
        _ = tracker.apply(position(1))
        _ = tracker.apply(position(2))
        // Reconnected with since=2: `last` is 5, then the backlog 3, 4, 5 follows.
        let resubscribed = tracker.subscribed(subscribed(last: 5), since: 2)
        XCTAssertEqual(seqs(resubscribed), [], "taking 5 now would drop 3 and 4")
        XCTAssertFalse(resubscribed.contains(.waitingForFirstPosition))
        var yielded: [Int64] = []
        for seq: Int64 in [3, 4, 5, 6] { yielded += seqs(tracker.apply(position(seq))) }
        XCTAssertEqual(yielded, [3, 4, 5, 6])
    }

    func testAReconnectReportsWhatChangedWhileDisconnected() {
        var tracker = DonationTracker()
        _ = tracker.subscribed(subscribed(online: true), since: nil)
        _ = tracker.apply(position(1))
        XCTAssertEqual(
            tracker.subscribed(subscribed(state: .beingTakenTo, tracking: true, last: 1, online: false), since: 1),
            [.state(.beingTakenTo, tracking: true, destination: .home), .presence(online: false, lastSeen: nil)])
    }

    func testPauseAndResumeAreReportedAndResumeWaitsForANewPosition() {
        var tracker = DonationTracker()
        _ = tracker.subscribed(subscribed(), since: nil)
        _ = tracker.apply(position(1))
        let pause = ServerFrame.state(.init(channel: channel, donation: "d-1", state: .pickedByVolunteer))
        XCTAssertEqual(tracker.apply(pause), [.paused(.pickedByVolunteer)])
        XCTAssertEqual(tracker.tick(now: 9_999_999_999), [], "a paused trip is never stale")
        let resume = ServerFrame.state(.init(channel: channel, donation: "d-1", state: .beingTakenTo))
        XCTAssertEqual(tracker.apply(resume), [.resumed(.beingTakenTo, destination: .institution), .waitingForFirstPosition])
    }

    func testAnOldPositionIsAnnouncedStaleOnceThenFreshAgain() {
        var tracker = DonationTracker(staleAfterMilliseconds: 60_000)
        _ = tracker.subscribed(subscribed(), since: nil)
        _ = tracker.apply(position(1))
        let taken = fix(1).timestamp
        XCTAssertEqual(tracker.tick(now: taken + 60_000), [])
        XCTAssertEqual(tracker.tick(now: taken + 60_001), [.stale(lastFix: taken)])
        XCTAssertEqual(tracker.tick(now: taken + 90_000), [], "announced once")
        XCTAssertEqual(tracker.apply(position(2)), [.fresh, .position(seq: 2, fix(2))])
    }

    func testDeliveredEndsAndNothingFollows() {
        var tracker = DonationTracker()
        _ = tracker.subscribed(subscribed(), since: nil)
        let delivered = ServerFrame.unsubscribed(.init(re: nil, channel: channel, donation: "d-1", reason: .delivered))
        XCTAssertEqual(tracker.apply(delivered), [.ended(.unsubscribed(.delivered))])
        XCTAssertEqual(tracker.apply(position(9)), [])
        XCTAssertEqual(tracker.finish(.stopped), [], "ended once")
    }

    func testFramesOfAnotherChannelOrDonationAreIgnored() {
        var tracker = DonationTracker()
        _ = tracker.subscribed(subscribed(), since: nil)
        XCTAssertEqual(tracker.apply(.position(.init(channel: "other@example.org", seq: 7, position: fix(7)))), [])
        XCTAssertEqual(tracker.apply(.unsubscribed(.init(re: nil, channel: channel, donation: "d-2", reason: .cancelled))), [])
        XCTAssertNil(tracker.ended)
    }

    func testARefusedResubscribeWhilePausedReportsThePause() {
        var tracker = DonationTracker()
        _ = tracker.subscribed(subscribed(), since: nil)
        XCTAssertEqual(tracker.notTrackable(), [.paused(.beingLookedFor)])
        XCTAssertEqual(tracker.notTrackable(), [], "said once")
    }
}

/// A broker that answers a subscribe during a pause with a normal `subscribed` (`tracking: false`, `online: null`).
final class PausedSubscriptionTrackerTests: XCTestCase {
    func testAPausedSubscriptionIsPausedAndWaitsForTheStateFrame() {
        var tracker = DonationTracker()
        let paused = ServerFrame.Subscribed(
            re: "s1", channel: "vol@example.org", donation: "d-1", state: .pickedByVolunteer, tracking: false, destination: nil,
            home: Home(lat: -34.6, lon: -58.4, label: nil), institution: nil, last: nil, online: nil)
        let events = tracker.subscribed(paused, since: nil)
        XCTAssertEqual(events.count, 1, "no waiting while paused: \(events)")
        XCTAssertFalse(tracker.tracking)
        var resume = ServerFrame.StateChange(channel: "vol@example.org", donation: "d-1", state: .beingTakenTo)
        resume.tracking = true
        resume.destination = .institution
        XCTAssertEqual(tracker.apply(.state(resume)), [.resumed(.beingTakenTo, destination: .institution), .waitingForFirstPosition])
        XCTAssertEqual(
            tracker.apply(.presence(.init(channel: "vol@example.org", online: true, lastSeen: 5))), [.presence(online: true, lastSeen: 5)])
        // Subscribed again (a reconnect) while paused: `online` null says nothing about presence.
        var again = paused
        again.re = "s2"
        _ = tracker.subscribed(again, since: nil)
        XCTAssertEqual(tracker.facts?.online, nil)
    }
}
