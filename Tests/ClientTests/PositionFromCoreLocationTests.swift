import BrokerClient
import BrokerProtocol
import Foundation
import XCTest

/// Core Location reports "invalid" as a negative accuracy, speed or course: those become absent.
final class PositionFromCoreLocationTests: XCTestCase {
    private let taken = Date(timeIntervalSince1970: 1_763_757_670.25)

    func testNegativeValuesMeanAbsent() {
        let position = Position(latitude: -34.6, longitude: -58.4, horizontalAccuracy: -1, speed: -1, course: -1, timestamp: taken)
        XCTAssertEqual(position, Position(lat: -34.6, lon: -58.4, accuracy: nil, speed: nil, heading: nil, timestamp: 1_763_757_670_250))
        XCTAssertNil(position.validationError(now: 1_763_757_670_250), "the broker's rules accept it")
    }

    func testValidValuesAreKeptAndACourseOf360IsNorth() {
        let position = Position(latitude: -34.6, longitude: -58.4, horizontalAccuracy: 8.5, speed: 7.2, course: 360, timestamp: taken)
        XCTAssertEqual(position.accuracy, 8.5)
        XCTAssertEqual(position.speed, 7.2)
        XCTAssertEqual(position.heading, 0)
        XCTAssertNil(Position(latitude: 0, longitude: 0, horizontalAccuracy: .nan, speed: .infinity, course: 90, timestamp: taken).speed)
    }
}
