import BrokerClient
import BrokerProtocol
import TrackingRules
import WatchRendering
import XCTest

/// tracker-watch measures the trip by the numbers the tracking page gets from the broker (``DonorViewRules``):
/// each rule is checked at its edge with the shared number, so a copy of its own in WatchRendering that drifts
/// fails here. (The page's side: PageSharedNumbersTests and TrackingPageConstantsTests; the speed and the ETA: TrackingRulesTests.)
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
}
