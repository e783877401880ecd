import BrokerProtocol
import XCTest

final class GeodesyTests: XCTestCase {
    func testDistanceBetweenKnownPlaces() {
        // Obelisco to Casa Rosada, Buenos Aires: about 1.3 km.
        let distance = Geodesy.distance(fromLat: -34.6037, lon: -58.3816, toLat: -34.6081, lon: -58.3703)
        XCTAssertEqual(distance, 1137, accuracy: 15)
        // One degree of latitude is about 111.2 km.
        XCTAssertEqual(Geodesy.distance(fromLat: 0, lon: 0, toLat: 1, lon: 0), 111_195, accuracy: 5)
        XCTAssertEqual(Geodesy.distance(fromLat: 10, lon: 20, toLat: 10, lon: 20), 0)
    }

    func testBearingPointsTheRightWay() {
        XCTAssertEqual(Geodesy.bearing(fromLat: 0, lon: 0, toLat: 1, lon: 0), 0, accuracy: 1e-9)
        XCTAssertEqual(Geodesy.bearing(fromLat: 0, lon: 0, toLat: 0, lon: 1), 90, accuracy: 1e-9)
        XCTAssertEqual(Geodesy.bearing(fromLat: 0, lon: 0, toLat: -1, lon: 0), 180, accuracy: 1e-9)
        XCTAssertEqual(Geodesy.bearing(fromLat: 0, lon: 0, toLat: 0, lon: -1), 270, accuracy: 1e-9)
    }

    func testDestinationIsTheInverseOfDistanceAndBearing() {
        let start = (lat: -34.6037, lon: -58.3816)
        for bearing in stride(from: 0.0, to: 360, by: 45) {
            let end = Geodesy.destination(fromLat: start.lat, lon: start.lon, bearing: bearing, distance: 2_500)
            XCTAssertEqual(Geodesy.distance(fromLat: start.lat, lon: start.lon, toLat: end.lat, lon: end.lon), 2_500, accuracy: 0.01)
            let back = Geodesy.bearing(fromLat: start.lat, lon: start.lon, toLat: end.lat, lon: end.lon)
            XCTAssertEqual(min(abs(back - bearing), 360 - abs(back - bearing)), 0, accuracy: 0.01)
        }
    }
}
