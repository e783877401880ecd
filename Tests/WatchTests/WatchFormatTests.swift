import WatchRendering
import XCTest

/// The words and numbers of the screen.
final class WatchFormatTests: XCTestCase {
    func testDistances() {
        XCTAssertEqual(WatchFormat.distance(0), "0 m")
        XCTAssertEqual(WatchFormat.distance(85.2), "85 m")
        XCTAssertEqual(WatchFormat.distance(854), "850 m")
        XCTAssertEqual(WatchFormat.distance(996), "1.0 km")
        XCTAssertEqual(WatchFormat.distance(1234), "1.2 km")
        XCTAssertEqual(WatchFormat.distance(9_960), "10 km")
        XCTAssertEqual(WatchFormat.distance(12_400), "12 km")
        XCTAssertEqual(WatchFormat.distance(-1), "—")
        XCTAssertEqual(WatchFormat.distance(.infinity), "—")
    }

    func testSpeedsAndETAs() {
        XCTAssertEqual(WatchFormat.speed(7.8), "28 km/h")
        XCTAssertEqual(WatchFormat.eta(30), "< 1 min")
        XCTAssertEqual(WatchFormat.eta(61), "2 min")
        XCTAssertEqual(WatchFormat.eta(180), "3 min")
        XCTAssertEqual(WatchFormat.eta(3_900), "1 h 05 min")
    }

    func testAges() {
        XCTAssertEqual(WatchFormat.age(12), "12 s")
        XCTAssertEqual(WatchFormat.age(-3), "0 s")
        XCTAssertEqual(WatchFormat.age(61), "1 min")
        XCTAssertEqual(WatchFormat.age(3600), "1 h")
        XCTAssertEqual(WatchFormat.age(3_900), "1 h 5 min")
    }

    func testBearingsAndCompassPoints() {
        XCTAssertEqual(WatchFormat.bearing(183), "183° (S)")
        XCTAssertEqual(WatchFormat.bearing(359.7), "0° (N)")
        XCTAssertEqual(WatchFormat.bearing(22.4), "22° (N)")
        XCTAssertEqual(WatchFormat.bearing(22.5), "23° (NE)")
        XCTAssertEqual(WatchFormat.bearing(292.5), "293° (NW)")
        XCTAssertEqual(WatchFormat.compassIndex(-90), 6)
        XCTAssertEqual(WatchFormat.accuracy(5), "±5 m")
    }

    func testTimes() {
        XCTAssertEqual(WatchFormat.iso8601(Fixtures.start), "2026-11-21T22:00:00Z")
        XCTAssertEqual(WatchFormat.iso8601(0), "1970-01-01T00:00:00Z")
        XCTAssertEqual(WatchFormat.iso8601(951_782_400_999), "2000-02-29T00:00:00Z")
        XCTAssertEqual(WatchFormat.clock(Fixtures.start + 65_400), "22:01:05")
        XCTAssertEqual(WatchFormat.clock(Fixtures.start, utcOffsetSeconds: -3 * 3600), "19:00:00", "Buenos Aires is UTC-3")
        XCTAssertEqual(WatchFormat.clock(Fixtures.start, utcOffsetSeconds: 3 * 3600), "01:00:00")
    }
}
