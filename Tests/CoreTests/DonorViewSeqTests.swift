import BrokerProtocol
import NIOConcurrencyHelpers
import XCTest

@testable import BrokerCore

/// A curious donor reading the seqs it receives. Ana's donation rides with a volunteer who also carries Bea's: the
/// numbers Ana gets, live, in `last`, in `since` and through a poll, must be exactly those she would get if Bea's
/// donation did not exist, so they tell her nothing of the fixes kept for Bea, nor of how long the volunteer drove
/// for Bea before Ana's window opened or while Ana's trip was paused.
final class DonorViewSeqTests: XCTestCase {
    private let ana = "ana@example.org"
    private let bea = "bea@example.org"

    /// Everything Ana could read of the volunteer's numbering in one run.
    private struct AnasView: Equatable {
        var live: [Int64] = []
        var last: Int64?
        var since: [Int64] = []
        var polled: [Int64] = []
        var latestPolled: Int64?
    }

    /// One run of the same day for Ana, with or without Bea's donation on the same volunteer.
    private func anasView(withBea: Bool) throws -> AnasView {
        let fixture = HubFixture()
        fixture.move("d-ana", to: .created, donor: ana)
        if withBea { fixture.move("d-bea", to: .beingLookedFor, donor: bea) }
        // The volunteer drives for Bea before Ana's window opens.
        try publish(5, in: fixture)

        fixture.move("d-ana", to: .beingLookedFor, donor: ana)
        let (_, sink) = try fixture.watcher(of: "d-ana", ana)
        var view = AnasView()
        let live = { try sink.frames().compactMap { frame -> Int64? in if case .position(let update) = frame { update.seq } else { nil } } }
        try publish(2, in: fixture)
        view.live += try live()
        // Ana's trip pauses at her door while the volunteer goes on for Bea, then resumes.
        fixture.move("d-ana", to: .pickedByVolunteer, donor: ana)
        try publish(4, in: fixture)
        fixture.move("d-ana", to: .beingTakenTo, donor: ana)
        try publish(3, in: fixture)
        view.live += try live()

        let (again, resumed) = fixture.connect(ana)
        XCTAssertNil(fixture.hub.subscribe(again, .init(target: .donation("d-ana"), since: 0)))
        let frames = try resumed.frames()
        if case .subscribed(let subscribed) = frames.first { view.last = subscribed.last?.seq }
        view.since = frames.compactMap { if case .position(let update) = $0 { update.seq } else { nil } }
        let polled = try fixture.hub.positions(on: fixture.volunteer, after: 0, for: ana).get()
        view.polled = polled.positions.map(\.seq)
        view.latestPolled = polled.latestVisibleSeq
        return view
    }

    /// Publishes `count` fixes a second apart (the tests' rate limit is one a second).
    private func publish(_ count: Int, in fixture: HubFixture) throws {
        for _ in 0..<count {
            fixture.clock.advance(by: 1_000)
            _ = try fixture.publish().get()
        }
    }

    func testTheSeqsAnaSeesAreTheSameWhetherOrNotTheVolunteerAlsoDrivesForBea() throws {
        let alone = try anasView(withBea: false)
        let shared = try anasView(withBea: true)
        XCTAssertEqual(alone.live.count, 5, "two fixes before the pause and three after it")
        XCTAssertEqual(shared, alone)
    }

    func testAnasSeqsFollowEachOtherAcrossAPauseSoAGapMeansALoss() throws {
        let view = try anasView(withBea: true)
        let first = try XCTUnwrap(view.live.first)
        XCTAssertEqual(view.live, Array(first..<first + 5), "the fixes kept for Bea during the pause are not counted")
        XCTAssertEqual(view.last, view.live.last)
        // The pause purged what was kept before it; `since` and the poll read the window after the resume.
        XCTAssertEqual(view.since, Array(view.live.suffix(3)))
        XCTAssertEqual(view.polled, view.since)
        XCTAssertEqual(view.latestPolled, view.live.last)
    }

    func testAFixKeptForBothDonorsReachesEachUnderItsOwnNumber() throws {
        let fixture = HubFixture()
        fixture.move("d-bea", to: .beingLookedFor, donor: bea)
        try publish(3, in: fixture)
        fixture.move("d-ana", to: .beingLookedFor, donor: ana)
        let (_, anaSink) = try fixture.watcher(of: "d-ana", ana)
        let (_, beaSink) = try fixture.watcher(of: "d-bea", bea)
        try publish(1, in: fixture)
        let anas = try anaSink.frames().compactMap { if case .position(let update) = $0 { update } else { nil } }
        let beas = try beaSink.frames().compactMap { if case .position(let update) = $0 { update } else { nil } }
        XCTAssertEqual(anas.map(\.position), beas.map(\.position), "the same fix")
        XCTAssertEqual(beas.map(\.seq), [try XCTUnwrap(anas.first?.seq) + 3], "Bea's view counted her three earlier fixes; Ana's did not")
    }

    func testAnotherNodeNumbersAPositionAsTheNodeThatKeptItAndGoesOnFromThere() throws {
        let link = ForwardingLink()
        let sender = HubFixture(cluster: link)
        let receiver = HubFixture()
        link.receiver.withLockedValue { $0 = receiver.hub }
        for fixture in [receiver, sender] {
            fixture.move("d-bea", to: .beingLookedFor, donor: bea)
        }
        try publish(3, in: sender)
        for fixture in [receiver, sender] {
            fixture.clock.advance(by: 1_000)
            fixture.move("d-ana", to: .beingLookedFor, donor: ana)
        }
        let (_, onSender) = try sender.watcher(of: "d-ana", ana)
        let (_, onReceiver) = try receiver.watcher(of: "d-ana", ana)
        receiver.clock.advance(by: 2_000)
        try publish(2, in: sender)
        let sent = try onSender.frames().compactMap { if case .position(let update) = $0 { update.seq } else { nil } }
        let received = try onReceiver.frames().compactMap { if case .position(let update) = $0 { update.seq } else { nil } }
        XCTAssertEqual(sent.count, 2)
        XCTAssertEqual(received, sent, "Ana sees the same numbers on either node")

        // The volunteer moves to the receiving node: its numbers go on from the sender's.
        receiver.clock.advance(by: 1_000)
        _ = try receiver.publish().get()
        let next = try onReceiver.frames().compactMap { if case .position(let update) = $0 { update.seq } else { nil } }
        XCTAssertEqual(next, [try XCTUnwrap(sent.last) + 1])
    }

    /// A cluster link that hands every announced position straight to another hub, as the bus would.
    private final class ForwardingLink: ClusterLink {
        let receiver = NIOLockedValueBox<Hub?>(nil)

        func announcePosition(channel: String, seq: Int64, position: Position, donations: [String], viewSeqs: [Int64], seenAt: Int64) {
            receiver.withLockedValue { $0 }?.receiveRemotePosition(
                channel: channel, seq: seq, position: position, donations: donations, viewSeqs: viewSeqs, seenAt: seenAt)
        }
        func announceOffline(channel: String, lastSeen: Int64?) {}
        func admitSubscription(_ waiting: WaitingSubscription) -> Bool { true }
        func withdrawSubscription(connection: UInt64, channel: String?, donation: String?) -> WaitingSubscription? { nil }
    }
}
