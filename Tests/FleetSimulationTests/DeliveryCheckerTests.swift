import BrokerProtocol
import FleetSimulation
import XCTest

/// The donor's checks, fed with frames by hand.
final class DeliveryCheckerTests: XCTestCase {
    private let channel = "vol@example.org"
    private let home = GeoPoint(lat: -34.6037, lon: -58.3816)

    private func subscribed(state: DonationState = .beingLookedFor, last: ServerFrame.KeptPosition? = nil) -> ServerFrame.Subscribed {
        .init(
            re: "s1", channel: channel, donation: "d-1", state: state, tracking: state.isTrackable, destination: state.destination,
            home: Home(lat: home.lat, lon: home.lon), institution: Institution(lat: -34.58, lon: -58.42), last: last, online: true)
    }

    /// The position numbered `seq` in the donor's view, taken at 1,000 + `seq` ms unless told.
    private func position(_ seq: Int64, metres: Double = 2_000, timestamp: Int64? = nil) -> ServerFrame.PositionUpdate {
        let point = home.moved(bearing: 0, distance: metres)
        return .init(channel: channel, seq: seq, position: Position(lat: point.lat, lon: point.lon, accuracy: 5, timestamp: timestamp ?? 1_000 + seq))
    }

    private func checker() -> DeliveryChecker {
        DeliveryChecker(donation: "d-1", allowedEnds: [.delivered, .deleted])
    }

    func testAContinuousTripPasses() {
        var checker = checker()
        checker.subscribed(subscribed(), resumed: false, at: 900)
        for seq in 1...5 as ClosedRange<Int64> { XCTAssertTrue(checker.position(position(seq, metres: 2_000 - Double(seq) * 390))) }
        checker.arrival(.init(channel: channel, donation: "d-1", place: .home, distance: 50), place: home)
        checker.state(.init(channel: channel, donation: "d-1", state: .pickedByVolunteer))
        checker.state(.init(channel: channel, donation: "d-1", state: .beingTakenTo))
        checker.position(position(6))
        checker.arrival(.init(channel: channel, donation: "d-1", place: .institution, distance: 20), place: home.moved(bearing: 0, distance: 2_020))
        checker.unsubscribed(.delivered)
        checker.finish(
            windows: [.init(start: 0, end: 2_000)], kept: (1...6).map { .init(timestamp: 1_000 + $0, window: 0) }, reached: [.home, .institution])
        XCTAssertEqual(checker.problems, [])
        XCTAssertEqual(checker.received, 6)
        XCTAssertEqual(checker.lostCount, 0)
    }

    func testGapsDuplicatesAndPausedPositionsAreCaught() {
        var checker = checker()
        checker.subscribed(subscribed(), resumed: false, at: 900)
        checker.position(position(1))
        checker.position(position(3))
        checker.position(position(3))
        checker.state(.init(channel: channel, donation: "d-1", state: .pickedByVolunteer))
        checker.position(position(4))
        XCTAssertEqual(checker.problems.map(\.kind), [.gap, .duplicate, .whilePaused])
    }

    func testPositionsOutsideTheWindowOrTheSubscriptionAreCaught() {
        var checker = checker()
        checker.position(position(1))
        checker.subscribed(subscribed(), resumed: false, at: 900)
        checker.position(position(2, timestamp: 5_000))
        checker.unsubscribed(.volunteerChanged)
        checker.position(position(3))
        checker.finish(windows: [.init(start: 0, end: 2_000)], kept: [], reached: [])
        XCTAssertEqual(checker.problems.map(\.kind), [.outsideSubscription, .end, .outsideSubscription, .outsideWindow])
    }

    func testArrivalsMustBeAtTheDestinationAndNextToThePositionThatCausedThem() {
        var checker = checker()
        checker.subscribed(subscribed(), resumed: false, at: 900)
        checker.arrival(.init(channel: channel, donation: "d-1", place: .institution, distance: 10), place: home)
        checker.position(position(1, metres: 100))
        checker.arrival(.init(channel: channel, donation: "d-1", place: .home, distance: 40), place: home)
        checker.arrival(.init(channel: channel, donation: "d-1", place: .home, distance: 400), place: home)
        XCTAssertEqual(checker.problems.map(\.kind), [.arrival, .arrival, .arrival])
    }

    func testMissedPositionsAreLostUnlessTheirWindowClosedWhileTheDonorWasAway() {
        // Kept 1...3 in window 0, 4...6 in window 1 (after a pause); the donor saw 1 and 6.
        let taken: [Int64] = [100, 200, 300, 1_600, 1_700, 1_800]
        let kept: [DeliveryChecker.Kept] = (0...2).map { .init(timestamp: taken[$0], window: 0) } + (3...5).map { .init(timestamp: taken[$0], window: 1) }
        let windows: [DeliveryChecker.Window] = [.init(start: 0, end: 1_000, endSent: 990), .init(start: 1_500, end: nil)]

        var away = checker()
        away.subscribed(subscribed(), resumed: false, at: 100)
        away.position(position(1, timestamp: taken[0]))
        away.disconnected(at: 500)
        away.subscribed(subscribed(last: .init(seq: 6, position: position(6, timestamp: taken[5]).position)), resumed: true, at: 1_600)
        XCTAssertFalse(away.position(position(6, timestamp: taken[5])), "a backlog position is not a live delivery")
        away.finish(windows: windows, kept: kept, reached: [])
        // 2 and 3 went with the pause while the donor was away; 4 and 5 should have come in the backlog.
        XCTAssertEqual(away.lostCount, 2)
        XCTAssertEqual(away.problems.map(\.kind), [.lost])

        var connected = checker()
        connected.subscribed(subscribed(), resumed: false, at: 100)
        connected.position(position(1, timestamp: taken[0]))
        connected.position(position(6, timestamp: taken[5]))
        connected.finish(windows: windows, kept: kept, reached: [])
        XCTAssertEqual(connected.problems.map(\.kind), [.gap, .lost])
        XCTAssertEqual(connected.lostCount, 4)
    }

    func testMissingArrivalsAreCaughtAtTheEnd() {
        var checker = checker()
        checker.subscribed(subscribed(), resumed: false, at: 100)
        checker.state(.init(channel: channel, donation: "d-1", state: .deliveredByDonor))
        checker.state(.init(channel: channel, donation: "d-1", state: .beingTakenTo))
        checker.unsubscribed(.delivered)
        checker.finish(windows: [], kept: [], reached: [.home, .institution])
        XCTAssertEqual(checker.problems.map(\.kind), [.arrival, .arrival])
    }
}
