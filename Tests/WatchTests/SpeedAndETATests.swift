import BrokerClient
import BrokerProtocol
import WatchRendering
import XCTest

/// The smoothed speed and the arrival estimate.
final class SpeedAndETATests: XCTestCase {
    private let t0 = Fixtures.start

    func testTheAverageWeighsANewSampleByThreeTenths() throws {
        var smoother = SpeedSmoother()
        XCTAssertNil(smoother.value)
        smoother.add(10)
        XCTAssertEqual(smoother.value, 10)
        smoother.add(0)
        XCTAssertEqual(try XCTUnwrap(smoother.value), 7, accuracy: 1e-9)
        smoother.add(0)
        XCTAssertEqual(try XCTUnwrap(smoother.value), 4.9, accuracy: 1e-9)
    }

    func testImplausibleSamplesAreIgnored() {
        var smoother = SpeedSmoother()
        smoother.add(8)
        smoother.add(.nan)
        smoother.add(-1)
        smoother.add(300)
        XCTAssertEqual(smoother.value, 8)
    }

    func testASampleIsTheReportedSpeedElseDistanceOverTime() throws {
        let a = Position(lat: -34.6037, lon: -58.3816, timestamp: t0)
        let north = Geodesy.destination(fromLat: a.lat, lon: a.lon, bearing: 0, distance: 100)
        let b = Position(lat: north.lat, lon: north.lon, timestamp: t0 + 10_000)
        XCTAssertEqual(try XCTUnwrap(SpeedSmoother.sample(from: a, to: b)), 10, accuracy: 0.01)
        var reported = b
        reported.speed = 4
        XCTAssertEqual(SpeedSmoother.sample(from: a, to: reported), 4)
        XCTAssertNil(SpeedSmoother.sample(from: nil, to: b), "one fix without speed tells nothing")
        var late = b
        late.timestamp = t0 + 3_600_000
        XCTAssertNil(SpeedSmoother.sample(from: a, to: late), "fixes an hour apart say nothing about the speed now")
        var same = b
        same.timestamp = t0
        XCTAssertNil(SpeedSmoother.sample(from: a, to: same))
    }

    func testTheETAIsDistanceOverSmoothedSpeedAndNoneWhenStandingStill() throws {
        var smoother = SpeedSmoother()
        XCTAssertNil(smoother.eta(distance: 1000))
        smoother.add(10)
        XCTAssertEqual(try XCTUnwrap(smoother.eta(distance: 1000)), 100, accuracy: 1e-9)
        for _ in 0..<20 { smoother.add(0) }
        XCTAssertNil(smoother.eta(distance: 1000), "below 0.5 m/s there is no ETA")
    }

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
