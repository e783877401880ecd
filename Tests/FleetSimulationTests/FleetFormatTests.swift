import Foundation
import XCTest

@testable import FleetSimulation

/// What a fleet reads as people write it (durations, areas) and the status line it shows while it runs.
final class FleetFormatTests: XCTestCase {
    func testDurationsAndAreasAreReadAsPeopleWriteThem() throws {
        XCTAssertEqual(SimDuration(parsing: "20s")?.seconds, 20)
        XCTAssertEqual(SimDuration(parsing: "10m")?.seconds, 600)
        XCTAssertEqual(SimDuration(parsing: "1h")?.seconds, 3_600)
        XCTAssertEqual(SimDuration(parsing: "500ms")?.seconds, 0.5)
        XCTAssertEqual(SimDuration(parsing: "15")?.seconds, 15)
        XCTAssertNil(SimDuration(parsing: "-3s"))
        XCTAssertNil(SimDuration(parsing: "soon"))
        XCTAssertEqual(SimDuration(seconds: 600).description, "10m")

        let area = try Fixtures.buenosAires()
        XCTAssertEqual(area.name, "Buenos Aires")
        XCTAssertGreaterThanOrEqual(area.institutions.count, 5)
        for place in area.institutions {
            XCTAssertEqual(place.lat, -34.6, accuracy: 0.1, place.name)
            XCTAssertEqual(place.lon, -58.44, accuracy: 0.1, place.name)
        }
        XCTAssertThrowsError(try Area.parse("name: Nowhere\nbounds: {south: 1, west: 1, north: 0, east: 2}\ninstitutions: []"))
        XCTAssertThrowsError(try Area.parse("name: [unclosed"))
    }

    func testTheProgressLineShowsRatesLatencyAndErrors() {
        var previous = FleetStats.Snapshot(), now = FleetStats.Snapshot()
        now.volunteersOnline = 5
        now.donorsOnline = 4
        previous.published = 10
        now.published = 30
        now.deliveries = 18
        now.latency = LatencySummary(count: 18, p50: 1.5, p90: 2, p99: 12.4, p999: 13, max: 14, mean: 2)
        now.errors = 1
        now.rateLimited = 2
        let line = ProgressLine().render(now: now, previous: previous, seconds: 2, elapsed: 75)
        XCTAssertEqual(
            line,
            "01:15 | connected 5 vol 4 donors | positions/s 10.0 | deliveries/s 9.0 | p50 1.50ms p99 12ms | delivered 0 cancelled 0 | errors 1 | RATE-LIMITED 2")
        XCTAssertEqual(ProgressLine().inPlace("abcdef", width: 4), "\rabc\u{1B}[K")
    }
}
