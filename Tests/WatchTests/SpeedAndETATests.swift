import BrokerClient
import BrokerProtocol
import WatchRendering
import XCTest

/// The arrival estimate on the watcher's screen (the rule itself, `SpeedSmoother`: TrackingRulesTests).
final class SpeedAndETATests: XCTestCase {
    private let t0 = Fixtures.start

    func testTheViewShowsTheETAFromTheSmoothedSpeed() throws {
        // 6 fixes at 8.3 m/s, 600 m to go: 72 s, shown rounded up.
        let (state, now) = Fixtures.headingHome()
        let model = WatchViewModel(state: state, now: now)
        XCTAssertEqual(try XCTUnwrap(model.distanceMetres), 600, accuracy: 1)
        XCTAssertEqual(try XCTUnwrap(model.etaSeconds), 600 / 8.3, accuracy: 0.5)
        XCTAssertEqual(model.eta, "2 min")
        XCTAssertEqual(model.speed, "30 km/h")
    }

    func testNoETABeforeTheFirstFixOrWhilePausedAndADashInstead() {
        var (state, now) = Fixtures.waiting()
        XCTAssertEqual(WatchViewModel(state: state, now: now).eta, "—")
        (state, now) = Fixtures.paused()
        let model = WatchViewModel(state: state, now: now)
        XCTAssertNil(model.etaSeconds)
        XCTAssertEqual(model.eta, "—")
        XCTAssertEqual(model.distance, "—")
    }

    func testAStoppedVolunteerHasNoETA() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        for seq in 1...10 {
            state.apply(Fixtures.position(seq: Int64(seq), lat: -34.62, lon: -58.38, at: t0 + Int64(seq) * 20_000, speed: 0), now: t0)
        }
        let model = WatchViewModel(state: state, now: t0 + 200_000)
        XCTAssertEqual(model.eta, "—")
        XCTAssertEqual(model.speed, "0 km/h")
    }
}
