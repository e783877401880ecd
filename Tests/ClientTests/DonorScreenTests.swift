import BrokerClient
import BrokerProtocol
import XCTest

/// The donor's screen state, from the watcher's events: one phase at every moment, with distance and ETA.
final class DonorScreenTests: XCTestCase {
    private let t0: Int64 = 1_763_757_600_000
    private let home = Home(lat: -34.6, lon: -58.4, label: nil)

    private func facts(tracking: Bool = true, online: Bool? = true) -> DonationFacts {
        var tracker = DonationTracker()
        let events = tracker.subscribed(
            ServerFrame.Subscribed(
                re: "s1", channel: "vol@example.org", donation: "d-1", state: tracking ? .beingLookedFor : .pickedByVolunteer, tracking: tracking,
                destination: tracking ? .home : nil, home: home, institution: Institution(lat: -34.61, lon: -58.41, name: "Caritas"), last: nil,
                online: online),
            since: nil)
        guard case .subscribed(let facts) = events.first else { fatalError("no facts in \(events)") }
        return facts
    }

    /// A fix `metres` north of home, taken at `t0 + seconds`.
    private func fix(metresNorth metres: Double, seconds: Int64) -> Position {
        Position(lat: home.lat + metres / 111_195, lon: home.lon, timestamp: t0 + seconds * 1000)
    }

    func testFromWaitingToLiveToStaleToArrived() {
        var screen = DonorScreen()
        XCTAssertEqual(screen.phase, .connecting)
        screen.apply(.connection(.connected), now: t0)
        screen.apply(.subscribed(facts()), now: t0)
        XCTAssertEqual(screen.phase, .waiting)
        screen.apply(.position(seq: 1, fix(metresNorth: 1_000, seconds: 0)), now: t0)
        screen.apply(.position(seq: 2, fix(metresNorth: 900, seconds: 10)), now: t0 + 10_000)
        XCTAssertEqual(screen.phase, .live)
        XCTAssertEqual(screen.distance ?? 0, 900, accuracy: 1)
        XCTAssertEqual(screen.eta ?? 0, 90, accuracy: 1, "900 m at 10 m/s")
        XCTAssertEqual(screen.at(t0 + 71_000).phase, .stale, "61 s after the last fix")
        XCTAssertEqual(screen.at(t0 + 69_000).phase, .live)
        screen.apply(.presence(online: false, lastSeen: t0 + 10_000), now: t0 + 20_000)
        XCTAssertEqual(screen.phase, .offline)
        screen.apply(.arrival(place: .home, distance: 20), now: t0 + 30_000)
        XCTAssertEqual(screen.phase, .arrived)
        XCTAssertNil(screen.eta)
    }

    func testAPausedSubscriptionIsPausedAndAResumeWaitsForANewPosition() {
        var screen = DonorScreen()
        screen.apply(.subscribed(facts(tracking: false, online: nil)), now: t0)
        XCTAssertEqual(screen.phase, .paused)
        XCTAssertNil(screen.volunteerOnline, "presence is not told while paused")
        screen.apply(.resumed(.beingTakenTo, destination: .institution), now: t0 + 1000)
        XCTAssertEqual(screen.phase, .waiting)
        screen.apply(.position(seq: 3, fix(metresNorth: 0, seconds: 2)), now: t0 + 2000)
        XCTAssertEqual(screen.phase, .live)
        XCTAssertEqual(screen.distance ?? 0, 1_400, accuracy: 100, "measured to the institution")
    }

    func testTheLinkAndTheEnd() {
        var screen = DonorScreen()
        screen.apply(.subscribed(facts()), now: t0)
        screen.apply(.connection(.reconnecting(delay: .seconds(2), attempt: 1, reason: "reset")), now: t0)
        XCTAssertEqual(screen.link, .reconnecting(attempt: 1, at: t0 + 2000, reason: "reset"))
        screen.apply(.connection(.offline), now: t0)
        XCTAssertEqual(screen.link, .noNetwork)
        screen.apply(.ended(.unsubscribed(.delivered)), now: t0)
        XCTAssertEqual(screen.phase, .ended)
        XCTAssertEqual(screen.ended, .unsubscribed(.delivered))
        screen.apply(.position(seq: 9, fix(metresNorth: 0, seconds: 1)), now: t0)
        XCTAssertNil(screen.position, "nothing moves after the end")
    }
}
