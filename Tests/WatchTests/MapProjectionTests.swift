import BrokerProtocol
import DeterministicRandom
import WatchRendering
import XCTest

/// The projection onto terminal cells: north up, cells twice as tall as wide, everything in view.
final class MapProjectionTests: XCTestCase {
    private let home = WatchViewModel.Point(lat: Fixtures.home.lat, lon: Fixtures.home.lon)
    private let institution = WatchViewModel.Point(lat: Fixtures.institution.lat, lon: Fixtures.institution.lon)

    private func offset(_ metres: Double, bearing: Double) -> WatchViewModel.Point {
        let point = Geodesy.destination(fromLat: home.lat, lon: home.lon, bearing: bearing, distance: metres)
        return .init(lat: point.lat, lon: point.lon)
    }

    func testNorthIsUpAndEastIsRight() throws {
        let projection = try XCTUnwrap(MapProjection.fit([home, offset(2000, bearing: 45)], columns: 60, rows: 20))
        let centre = projection.cell(lat: home.lat, lon: home.lon)
        let north = offset(500, bearing: 0), east = offset(500, bearing: 90)
        let northCell = projection.cell(lat: north.lat, lon: north.lon)
        let eastCell = projection.cell(lat: east.lat, lon: east.lon)
        XCTAssertLessThan(northCell.row, centre.row, "north is up")
        XCTAssertEqual(northCell.column, centre.column)
        XCTAssertGreaterThan(eastCell.column, centre.column, "east is right")
        XCTAssertEqual(eastCell.row, centre.row)
    }

    func testACellIsTwiceAsTallAsItIsWide() {
        let projection = MapProjection(centerLat: home.lat, centerLon: home.lon, metresPerColumn: 50, columns: 81, rows: 41)
        XCTAssertEqual(projection.metresPerRow, 100)
        let origin = projection.cell(lat: home.lat, lon: home.lon)
        XCTAssertEqual(origin.column, 40)
        XCTAssertEqual(origin.row, 20)
        let east = offset(1000, bearing: 90), south = offset(1000, bearing: 180)
        // 1 km east is 20 columns; 1 km south is 10 rows.
        XCTAssertEqual(projection.cell(lat: east.lat, lon: east.lon).column - origin.column, 20)
        XCTAssertEqual(projection.cell(lat: south.lat, lon: south.lon).row - origin.row, 10)
    }

    func testLongitudeIsScaledByTheCosineOfLatitude() {
        let projection = MapProjection(centerLat: home.lat, centerLon: home.lon, metresPerColumn: 1, columns: 3, rows: 3)
        let oneDegreeEast = projection.metres(lat: home.lat, lon: home.lon + 1).east
        let expected = Double.pi / 180 * Geodesy.earthRadius * cos(home.lat * Double.pi / 180)
        XCTAssertEqual(oneDegreeEast, expected, accuracy: 0.001)
        XCTAssertEqual(oneDegreeEast, 91_600, accuracy: 200, "about 91.6 km per degree of longitude in Buenos Aires")
    }

    func testFitKeepsEveryPointInsideTheMargins() throws {
        var generator = SeededRandom(seed: 7)
        for round in 0..<200 {
            let count = 1 + Int(generator.next() % 20)
            let spread = [50.0, 800, 5000, 40_000][round % 4]
            let points = (0..<count).map { _ in
                offset(Double(generator.next() % 1000) / 1000 * spread, bearing: Double(generator.next() % 360))
            }
            let columns = 10 + Int(generator.next() % 100), rows = 5 + Int(generator.next() % 40)
            let projection = try XCTUnwrap(MapProjection.fit(points, columns: columns, rows: rows))
            for point in points {
                let cell = projection.cell(lat: point.lat, lon: point.lon)
                XCTAssertTrue((2...(columns - 3)).contains(cell.column), "column \(cell.column) of \(columns), round \(round)")
                XCTAssertTrue((1...(rows - 2)).contains(cell.row), "row \(cell.row) of \(rows), round \(round)")
            }
        }
    }

    func testTheFitUsesTheRoomItHas() throws {
        // Home and institution are about 4 km apart: the wider span fills the usable columns.
        let projection = try XCTUnwrap(MapProjection.fit([home, institution], columns: 45, rows: 16))
        let a = projection.cell(lat: home.lat, lon: home.lon), b = projection.cell(lat: institution.lat, lon: institution.lon)
        XCTAssertEqual(abs(a.column - b.column), 40)
        XCTAssertLessThan(b.row, a.row, "the institution is north of the home")
    }

    func testASinglePointShowsTheMinimumSpan() throws {
        let projection = try XCTUnwrap(MapProjection.fit([home], columns: 45, rows: 16))
        XCTAssertEqual(projection.metresPerColumn * 40, MapProjection.defaultMinimumSpan, accuracy: 0.001)
        XCTAssertNil(MapProjection.fit([], columns: 45, rows: 16))
    }

    func testTheScaleBarIsARoundDistanceThatFits() {
        for (metresPerColumn, label, columns) in [(110.0, "1 km", 9), (12.0, "100 m", 8), (3000.0, "20 km", 7), (0.9, "10 m", 11)] {
            let projection = MapProjection(centerLat: 0, centerLon: 0, metresPerColumn: metresPerColumn, columns: 45, rows: 16)
            let bar = projection.scaleBar(maxColumns: 15)
            XCTAssertEqual(bar.label, label, "\(metresPerColumn) m per column")
            XCTAssertEqual(bar.columns, columns, "\(metresPerColumn) m per column")
            XCTAssertLessThanOrEqual(bar.columns, 15)
        }
    }
}
