import BrokerProtocol
import DeterministicRandom
import FleetSimulation
import XCTest

/// Street-like routes, urban speeds and GPS noise.
final class MotionModelTests: XCTestCase {
    private let start = GeoPoint(lat: -34.6037, lon: -58.3816)
    private let end = GeoPoint(lat: -34.5875, lon: -58.4206)

    func testManhattanRoutesRunAlongTheGridAndEndAtTheDestination() {
        for seed in 0..<50 as Range<UInt64> {
            var rng = SeededRandom(seed: seed)
            let gridBearing = seed.isMultiple(of: 2) ? 0.0 : 30.0
            let route = Route.manhattan(from: start, to: end, gridBearing: gridBearing, using: &rng)
            XCTAssertEqual(route.start, start)
            XCTAssertEqual(route.end, end)
            XCTAssertGreaterThanOrEqual(route.legLengths.count, 2, "a trip across the grid turns at least once")
            XCTAssertGreaterThanOrEqual(route.length, start.distance(to: end) - 1)
            XCTAssertLessThanOrEqual(route.length, start.distance(to: end) * 1.5, "a Manhattan path is at most √2 times the straight line")
            // Every leg but the last (which absorbs the sphere's rounding) runs along one of the grid's axes.
            for index in 0..<(route.waypoints.count - 2) {
                let bearing = route.waypoints[index].bearing(to: route.waypoints[index + 1])
                let offAxis = (bearing - gridBearing).truncatingRemainder(dividingBy: 90)
                let deviation = min(abs(offAxis), 90 - abs(offAxis))
                XCTAssertLessThan(deviation, 1, "leg \(index) of seed \(seed) has bearing \(bearing)")
            }
        }
    }

    func testTheVehicleDrivesAtUrbanSpeedsAndStopsAtCorners() {
        var rng = SeededRandom(seed: 3)
        let route = Route.manhattan(from: start, to: end, using: &rng)
        let model = MotionModel(route: route, using: &rng)
        let slowest = route.length / (20 / 3.6), fastest = route.length / (40 / 3.6)
        XCTAssertGreaterThanOrEqual(model.duration, fastest - 1)
        XCTAssertLessThanOrEqual(model.duration, slowest + 25 * Double(route.legLengths.count) + 1)
        var previous = 0.0
        for second in stride(from: 0.0, through: model.duration, by: 5) {
            let state = model.truth(at: second)
            XCTAssertTrue(state.speed == 0 || (20 / 3.6 - 1e-9...40 / 3.6 + 1e-9).contains(state.speed), "speed \(state.speed)")
            XCTAssertGreaterThanOrEqual(state.distance, previous - 1e-6, "the vehicle never goes back")
            previous = state.distance
        }
        let arrived = model.truth(at: model.duration + 100)
        XCTAssertLessThan(arrived.point.distance(to: end), 0.5)
        XCTAssertEqual(arrived.speed, 0)
    }

    func testFixesCarryNoiseAndAnAccuracyThatFitsIt() {
        var rng = SeededRandom(seed: 11)
        let state = MotionModel.State(point: start, heading: 270, speed: 8, distance: 0)
        var errors: [Double] = []
        for _ in 0..<2_000 {
            let fix = MotionModel.fix(of: state, timestamp: 1_763_757_670_000, using: &rng)
            XCTAssertNil(fix.validationError(now: 1_763_757_670_000))
            let accuracy = try? XCTUnwrap(fix.accuracy)
            XCTAssertTrue((4...14).contains(accuracy ?? 0))
            XCTAssertEqual(fix.heading, 270)
            errors.append(GeoPoint(lat: fix.lat, lon: fix.lon).distance(to: start))
        }
        let mean = errors.reduce(0, +) / Double(errors.count)
        XCTAssertGreaterThan(mean, 1, "fixes are noisy")
        XCTAssertLessThan(mean, 12, "but about as good as the accuracy says")
        XCTAssertLessThan(errors.max() ?? 0, 60)
    }

    func testTheSameSeedReplaysTheSameDrive() {
        func drive(_ seed: UInt64) -> [Position] {
            var rng = SeededRandom(seed: seed)
            let model = MotionModel(route: .manhattan(from: start, to: end, using: &rng), using: &rng)
            return stride(from: 0.0, to: model.duration, by: 20).map { model.fix(at: $0, timestamp: 1, using: &rng) }
        }
        XCTAssertEqual(drive(42), drive(42))
        XCTAssertNotEqual(drive(42), drive(43))
        let root = SeededRandom(seed: 42)
        var a = root.fork(1), b = root.fork(1), c = root.fork(2)
        XCTAssertEqual(a.next(), b.next())
        var d = root.fork(1)
        XCTAssertNotEqual(d.next(), c.next())
    }
}
