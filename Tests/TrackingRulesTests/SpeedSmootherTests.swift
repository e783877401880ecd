import BrokerProtocol
import TrackingRules
import XCTest

/// The smoothed speed and the arrival estimate: the one implementation the client library, tracker-watch and the
/// broker use, each rule checked at its edge with the shared number of ``DonorViewRules``.
final class SpeedSmootherTests: XCTestCase {
    private let t0: Int64 = 1_795_298_400_000

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

    func testDistancesUseTheSharedEarthRadius() {
        // A quarter of a meridian is a quarter of the circle of that radius.
        let quarter = Geodesy.distance(fromLat: 0, lon: 0, toLat: 90, lon: 0)
        XCTAssertEqual(quarter, DonorViewRules.earthRadius * .pi / 2, accuracy: 1e-6)
    }
}
