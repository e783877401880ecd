import BrokerClient
import BrokerProtocol
import WatchRendering
import XCTest

/// The reducer: sequences of frames and link events, and what the donor then knows.
final class WatchStateTests: XCTestCase {
    private let t0 = Fixtures.start

    private func kept(_ seq: Int64, lat: Double = -34.61, at: Int64) -> ServerFrame.KeptPosition {
        .init(seq: seq, position: Position(lat: lat, lon: -58.38, accuracy: 5, speed: 8, heading: 0, timestamp: at))
    }

    func testSubscribedSetsTheTripAndTakesLastAsTheFix() {
        var state = WatchState(request: .donation("d-1"))
        XCTAssertEqual(state.connection, .connecting)
        state.apply(.welcome(.init(identity: "donor@example.org", heartbeat: 30)), now: t0)
        XCTAssertEqual(state.connection, .subscribing)
        let update = state.apply(Fixtures.subscribed(.beingLookedFor, last: kept(41, at: t0 - 5000)), now: t0)

        XCTAssertEqual(state.connection, .live)
        XCTAssertEqual(state.donationState, .beingLookedFor)
        XCTAssertTrue(state.tracking)
        XCTAssertEqual(state.destination, .home)
        XCTAssertEqual(state.home, Fixtures.home)
        XCTAssertEqual(state.institution, Fixtures.institution)
        XCTAssertEqual(state.online, true)
        XCTAssertEqual(state.fix?.seq, 41)
        XCTAssertEqual(state.highestSeq, 41)
        XCTAssertEqual(state.trail.count, 1)
        XCTAssertEqual(update.entries.map(\.kind), [.subscribed])
        XCTAssertEqual(update.position, 41)
        XCTAssertEqual(state.subscriptions, 1)
    }

    func testPositionsAreTakenInSeqOrderAndRepeatsAreDropped() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        XCTAssertNil(state.fix)
        XCTAssertEqual(state.apply(Fixtures.position(seq: 5, lat: -34.62, lon: -58.38, at: t0), now: t0).position, 5)
        XCTAssertEqual(state.apply(Fixtures.position(seq: 6, lat: -34.61, lon: -58.38, at: t0 + 20_000), now: t0 + 20_000).position, 6)
        // A backlog replay after a reconnect repeats seqs the watcher has seen: nothing changes.
        let repeated = state.apply(Fixtures.position(seq: 5, lat: -34.70, lon: -58.30, at: t0), now: t0 + 21_000)
        XCTAssertNil(repeated.position)
        XCTAssertEqual(state.fix?.seq, 6)
        XCTAssertEqual(state.fix?.position.lat, -34.61)
        XCTAssertEqual(state.highestSeq, 6)
        XCTAssertEqual(state.trail.count, 2)
    }

    func testTheTrailKeepsTheNewestFiftyPositions() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        for seq in 1...80 {
            state.apply(Fixtures.position(seq: Int64(seq), lat: -34.6 - Double(seq) / 10_000, lon: -58.38, at: t0 + Int64(seq) * 1000), now: t0)
        }
        XCTAssertEqual(state.trail.count, WatchState.trailLimit)
        XCTAssertEqual(state.trail.first?.timestamp, t0 + 31_000)
        XCTAssertEqual(state.trail.last?.timestamp, t0 + 80_000)
    }

    func testPauseAndResumeAreLoggedAndChangeTheDestination() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        let pause = state.apply(Fixtures.stateChange(.pickedByVolunteer), now: t0 + 1000)
        XCTAssertEqual(pause.entries.map(\.kind), [.pause])
        XCTAssertEqual(pause.entries.first?.text, "Tracking paused: Picked up — waiting for your confirmation")
        XCTAssertFalse(state.tracking)
        XCTAssertNil(state.destination)

        let resume = state.apply(Fixtures.stateChange(.beingTakenTo), now: t0 + 2000)
        XCTAssertEqual(resume.entries.map(\.kind), [.resume])
        XCTAssertEqual(resume.entries.first?.text, "Tracking resumed: On the way to the institution")
        XCTAssertTrue(state.tracking)
        XCTAssertEqual(state.destination, .institution)
        XCTAssertEqual(state.donationState, .beingTakenTo)
    }

    func testArrivalMarksTheDestinationUntilTheDestinationChanges() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        let update = state.apply(.arrival(.init(channel: Fixtures.channel, donation: Fixtures.donation, place: .home, distance: 85.2)), now: t0)
        XCTAssertEqual(state.arrived, .home)
        XCTAssertEqual(update.entries.first?.text, "The volunteer has arrived at your home (85 m away)")
        XCTAssertEqual(update.entries.first?.fields, [.init("place", "home"), .init("distance", "85 m")])
        XCTAssertEqual(WatchViewModel(state: state, now: t0).headline, "Arrived at your home")

        state.apply(Fixtures.stateChange(.pickedByVolunteer), now: t0 + 1000)
        state.apply(Fixtures.stateChange(.beingTakenTo), now: t0 + 2000)
        XCTAssertNil(state.arrived)
        XCTAssertEqual(WatchViewModel(state: state, now: t0).headline, "On the way to the institution")
    }

    func testPresenceChangesAreLoggedOnce() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor, online: true)])
        let offline = state.apply(.presence(.init(channel: Fixtures.channel, online: false, lastSeen: t0 - 2000)), now: t0)
        XCTAssertEqual(offline.entries.map(\.text), ["The volunteer went offline"])
        XCTAssertEqual(state.online, false)
        XCTAssertEqual(state.lastSeen, t0 - 2000)
        XCTAssertTrue(state.apply(.presence(.init(channel: Fixtures.channel, online: false, lastSeen: t0 - 2000)), now: t0).entries.isEmpty)
        let online = state.apply(.presence(.init(channel: Fixtures.channel, online: true, lastSeen: t0)), now: t0 + 1000)
        XCTAssertEqual(online.entries.map(\.text), ["The volunteer is online"])
    }

    func testFramesOfAnotherChannelOrDonationAreIgnored() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        let before = state
        state.apply(.position(.init(channel: "other@example.org", seq: 9, position: Position(lat: 0, lon: 0, timestamp: t0))), now: t0)
        state.apply(.state(.init(channel: Fixtures.channel, donation: "d-2", state: .pickedByVolunteer)), now: t0)
        state.apply(.unsubscribed(.init(re: nil, channel: Fixtures.channel, donation: "d-2", reason: .cancelled)), now: t0)
        XCTAssertEqual(state, before)
    }

    func testDeliveredEndsWithExitZeroAndLaterFramesAreIgnored() {
        var state = Fixtures.state([Fixtures.subscribed(.beingTakenTo)])
        let update = state.apply(.unsubscribed(.init(re: nil, channel: Fixtures.channel, donation: Fixtures.donation, reason: .delivered)), now: t0)
        XCTAssertEqual(state.ended, .unsubscribed(.delivered))
        XCTAssertEqual(state.ended?.exitCode, 0)
        XCTAssertEqual(state.donationState, .delivered)
        XCTAssertEqual(state.connection, .closed)
        XCTAssertEqual(update.entries.first?.kind, .ended)
        XCTAssertEqual(update.entries.first?.text, "Delivered to Caritas Palermo. Thank you!")
        let after = state
        state.apply(Fixtures.position(seq: 1, lat: -34.6, lon: -58.4, at: t0), now: t0 + 1)
        state.apply(LinkEvent.ended(.stopped), now: t0 + 2)
        XCTAssertEqual(state, after)
    }

    func testOtherEndsExitWithOne() {
        for reason in [ServerFrame.UnsubscribeReason.cancelled, .volunteerChanged, .deleted] {
            var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
            state.apply(.unsubscribed(.init(re: nil, channel: Fixtures.channel, donation: Fixtures.donation, reason: reason)), now: t0)
            XCTAssertEqual(state.ended?.exitCode, 1, "\(reason)")
        }
        XCTAssertEqual(WatchEnd.refused(.forbidden, message: "no").exitCode, 2)
        XCTAssertEqual(WatchEnd.refusedAfterReconnect(.notFound, message: "no").exitCode, 1)
        XCTAssertEqual(WatchEnd.connectionFailed("refused").exitCode, 3)
        XCTAssertEqual(WatchEnd.unauthorized("expired").exitCode, 3)
        XCTAssertEqual(WatchEnd.stopped.exitCode, 130)
    }

    func testReconnectResubscribesSinceTheHighestSeqAndReplaysOnlyNewPositions() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        state.apply(Fixtures.position(seq: 10, lat: -34.62, lon: -58.38, at: t0), now: t0)
        state.apply(.lost(reason: "the broker went away (1001)"), now: t0 + 1000)
        state.apply(.retrying(attempt: 1, at: t0 + 1500, reason: "the broker went away (1001)"), now: t0 + 1000)
        XCTAssertEqual(state.connection, .retrying(attempt: 1, at: t0 + 1500, reason: "the broker went away (1001)"))
        let resubscribing = state.apply(.resubscribing(since: state.highestSeq), now: t0 + 2000)
        XCTAssertEqual(resubscribing.entries.map(\.text), ["Reconnected; asking for the positions missed since seq 10"])

        // The volunteer went on to the institution meanwhile: the new subscribed says so, with the newest kept position.
        let subscribed = state.apply(
            Fixtures.subscribed(.beingTakenTo, last: kept(13, lat: -34.60, at: t0 + 60_000), online: false, re: "s2"), now: t0 + 61_000)
        XCTAssertEqual(subscribed.entries.map(\.kind), [.resubscribed, .state, .presence])
        XCTAssertEqual(state.destination, .institution)
        // `last` (13) waits for the backlog, which brings 11 to 13 in order, so the trail has no hole.
        XCTAssertNil(subscribed.position)
        for seq in 11...13 {
            let at = t0 + 40_000 + Int64(seq - 11) * 10_000
            let update = state.apply(Fixtures.position(seq: Int64(seq), lat: -34.60, lon: -58.38, at: at), now: t0 + 61_000)
            XCTAssertEqual(update.position, Int64(seq))
        }
        XCTAssertEqual(state.fix?.seq, 13)
        XCTAssertEqual(state.trail.count, 4)
        XCTAssertNil(state.apply(Fixtures.position(seq: 12, lat: -34.60, lon: -58.38, at: t0 + 50_000), now: t0 + 62_000).position)
        XCTAssertEqual(state.connection, .live)
        XCTAssertEqual(state.subscriptions, 2)
        XCTAssertEqual(state.log.map(\.kind), [.subscribed, .connection, .reconnect, .resubscribed, .state, .presence])
    }

    func testNotTrackableAfterAReconnectPausesOnce() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        let first = state.apply(.notTrackable(message: "donation d-1 is PICKED-BY-VOLUNTEER", retryAt: t0 + 15_000), now: t0)
        XCTAssertEqual(first.entries.map(\.kind), [.pause])
        XCTAssertEqual(state.connection, .waitingToResubscribe(at: t0 + 15_000))
        XCTAssertFalse(state.tracking)
        XCTAssertTrue(state.apply(.notTrackable(message: "again", retryAt: t0 + 30_000), now: t0 + 15_000).entries.isEmpty)
        XCTAssertEqual(WatchViewModel(state: state, now: t0).headline, "Tracking paused")
        XCTAssertEqual(WatchViewModel(state: state, now: t0).connection, "paused, asking again in 30 s")
    }

    func testStaleIsAnnouncedOnceAndFreshAfterANewFix() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        state.apply(Fixtures.position(seq: 1, lat: -34.62, lon: -58.38, at: t0), now: t0)
        XCTAssertTrue(state.tick(now: t0 + 60_000).isEmpty, "60 s is not yet stale")
        XCTAssertFalse(state.isStale(now: t0 + 60_000))
        XCTAssertEqual(state.tick(now: t0 + 61_000).entries.map(\.kind), [.stale])
        XCTAssertTrue(state.tick(now: t0 + 62_000).isEmpty)
        XCTAssertTrue(state.isStale(now: t0 + 62_000))
        let fresh = state.apply(Fixtures.position(seq: 2, lat: -34.61, lon: -58.38, at: t0 + 90_000), now: t0 + 91_000)
        XCTAssertEqual(fresh.entries.map(\.text), ["Location updates again (after 1 min)"])
        XCTAssertFalse(state.isStale(now: t0 + 91_000))
    }

    func testAFixIsNotStaleWhilePaused() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        state.apply(Fixtures.position(seq: 1, lat: -34.62, lon: -58.38, at: t0), now: t0)
        state.apply(Fixtures.stateChange(.deliveredByDonor), now: t0 + 1000)
        XCTAssertFalse(state.isStale(now: t0 + 600_000))
        XCTAssertTrue(state.tick(now: t0 + 600_000).isEmpty)
    }

    func testTheLogIsBounded() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        for index in 0..<150 {
            state.apply(.presence(.init(channel: Fixtures.channel, online: index % 2 == 0 ? false : true, lastSeen: nil)), now: t0)
        }
        XCTAssertEqual(state.log.count, WatchState.logLimit)
    }

    func testAnErrorFrameIsLoggedWithoutEnding() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        let update = state.apply(.error(.init(re: "u1", code: .notFound, message: "you are not subscribed")), now: t0)
        XCTAssertEqual(update.entries.first?.kind, .error)
        XCTAssertNil(state.ended)
    }

    func testControlCharactersFromTheBrokerNeverReachTheLog() {
        var state = WatchState(request: .donation("d-1"))
        state.apply(
            .subscribed(.init(
                re: nil, channel: "vol@example.org", donation: "d-1", state: .beingTakenTo, tracking: true, destination: .institution,
                home: Fixtures.home, institution: Institution(lat: -34.58, lon: -58.42, name: "Evil\u{1B}[2J\u{7}Inc"), last: nil, online: true)),
            now: t0)
        state.apply(.arrival(.init(channel: "vol@example.org", donation: "d-1", place: .institution, distance: 10)), now: t0)
        XCTAssertEqual(state.log.last?.text, "The volunteer has arrived at Evil?[2J?Inc (10 m away)")
        let model = WatchViewModel(state: state, now: t0)
        XCTAssertEqual(model.destination, "Evil?[2J?Inc")
    }
}
