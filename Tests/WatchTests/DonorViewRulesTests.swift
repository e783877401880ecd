import BrokerClient
import BrokerProtocol
import WatchRendering
import XCTest

/// tracker-watch measures the trip by the numbers the tracking page gets from the broker (``DonorViewRules``):
/// each rule is checked at its edge with the shared number, so a copy of its own in WatchRendering that drifts
/// fails here. (The page's side: TrackingPageConstantsTests.)
final class DonorViewRulesTests: XCTestCase {
    private let t0 = Fixtures.start

    func testAFixIsStaleJustAfterTheSharedThreshold() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        state.apply(Fixtures.position(seq: 1, lat: -34.61, lon: -58.38, at: t0), now: t0)
        XCTAssertFalse(state.isStale(now: t0 + DonorViewRules.staleAfterMilliseconds))
        XCTAssertTrue(state.isStale(now: t0 + DonorViewRules.staleAfterMilliseconds + 1))
    }

    func testTheTrailKeepsTheSharedNumberOfPositions() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        for seq in 1...(DonorViewRules.trailLimit + 7) {
            state.apply(Fixtures.position(seq: Int64(seq), lat: -34.6 - Double(seq) / 10_000, lon: -58.38, at: t0 + Int64(seq) * 1000), now: t0)
        }
        XCTAssertEqual(state.trail.count, DonorViewRules.trailLimit)
    }

    func testSpeedIsSmoothedAndFilteredByTheSharedNumbers() throws {
        var smoother = SpeedSmoother()
        smoother.add(10)
        smoother.add(0)
        XCTAssertEqual(try XCTUnwrap(smoother.value), (1 - DonorViewRules.speedWeight) * 10, accuracy: 1e-9)
        var jumps = SpeedSmoother()
        jumps.add(DonorViewRules.maximumPlausibleSpeed + 0.1)
        XCTAssertNil(jumps.value, "faster than the shared plausible speed: a GPS jump")
        jumps.add(DonorViewRules.maximumPlausibleSpeed)
        XCTAssertEqual(jumps.value, DonorViewRules.maximumPlausibleSpeed)

        var standing = SpeedSmoother()
        standing.add(DonorViewRules.minimumMovingSpeed - 0.01)
        XCTAssertNil(standing.eta(distance: 500), "slower than the shared moving speed: no ETA")
        var moving = SpeedSmoother()
        moving.add(DonorViewRules.minimumMovingSpeed)
        XCTAssertNotNil(moving.eta(distance: 500))
    }

    func testSpeedSamplesNeedTheSharedGapBetweenFixes() {
        let a = Position(lat: -34.6037, lon: -58.3816, timestamp: t0)
        let north = Geodesy.destination(fromLat: a.lat, lon: a.lon, bearing: 0, distance: 10)
        func fix(after gap: Int64) -> Position { Position(lat: north.lat, lon: north.lon, timestamp: t0 + gap) }
        XCTAssertNil(SpeedSmoother.sample(from: a, to: fix(after: DonorViewRules.minimumSampleGapMilliseconds - 1)))
        XCTAssertNotNil(SpeedSmoother.sample(from: a, to: fix(after: DonorViewRules.minimumSampleGapMilliseconds)))
        XCTAssertNotNil(SpeedSmoother.sample(from: a, to: fix(after: DonorViewRules.maximumSampleGapMilliseconds)))
        XCTAssertNil(SpeedSmoother.sample(from: a, to: fix(after: DonorViewRules.maximumSampleGapMilliseconds + 1)))
    }

    func testTheCourseNeedsTheSharedDistanceBetweenFixes() {
        func heading(apart metres: Double) -> Double? {
            let start = (lat: -34.61, lon: -58.38)
            let next = Fixtures.point(from: start, bearing: 90, metres: metres)
            let state = Fixtures.state([
                Fixtures.subscribed(.beingLookedFor),
                Fixtures.position(seq: 1, lat: start.lat, lon: start.lon, at: t0, heading: nil),
                Fixtures.position(seq: 2, lat: next.lat, lon: next.lon, at: t0 + 2000, heading: nil),
            ])
            return WatchViewModel(state: state, now: t0 + 2000).heading
        }
        XCTAssertNil(heading(apart: DonorViewRules.minimumCourseDistance - 0.5), "closer than the shared distance: noise")
        XCTAssertEqual(try XCTUnwrap(heading(apart: DonorViewRules.minimumCourseDistance + 0.5)), 90, accuracy: 1)
    }

    func testDistancesUseTheSharedEarthRadius() {
        // A quarter of a meridian is a quarter of the circle of that radius.
        let quarter = Geodesy.distance(fromLat: 0, lon: 0, toLat: 90, lon: 0)
        XCTAssertEqual(quarter, DonorViewRules.earthRadius * .pi / 2, accuracy: 1e-6)
    }
}
