import BrokerProtocol
import Foundation
import XCTest

@testable import PubNubCompatibility

/// The shapes of a PubNub publish the broker reads as a position, what it refuses, and the shape it delivers.
final class PubNubPositionTests: XCTestCase {
    private let now: Int64 = 1_763_757_600_000

    private func read(_ json: String) -> Result<(position: Position, shape: PubNubShape), BrokerError> {
        PubNubPosition.read(Data(json.utf8), now: now)
    }

    private func refusal(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> BrokerError? {
        guard case .failure(let error) = read(json) else {
            XCTFail("\(json) was accepted", file: file, line: line)
            return nil
        }
        return error
    }

    func testEveryCommonSpellingIsReadAndItsShapeKept() throws {
        let lngMs = try read(#"{"lat":52.5,"lng":13.4,"timestamp":1763757590000,"accuracy":4,"speed":1.5,"heading":90}"#).get()
        XCTAssertEqual(lngMs.position, Position(lat: 52.5, lon: 13.4, accuracy: 4, speed: 1.5, heading: 90, timestamp: 1_763_757_590_000))
        XCTAssertEqual(lngMs.shape, PubNubShape(latitude: "lat", longitude: "lng", time: "timestamp", timeInSeconds: false))
        let lonSeconds = try read(#"{"lat":52.5,"lon":13.4,"ts":1763757590.25}"#).get()
        XCTAssertEqual(lonSeconds.position.timestamp, 1_763_757_590_250, "a time below 10^11 is seconds")
        XCTAssertEqual(lonSeconds.shape, PubNubShape(latitude: "lat", longitude: "lon", time: "ts", timeInSeconds: true))
        let long = try read(#"{"latitude":52.5,"longitude":13.4,"time":1763757590}"#).get()
        XCTAssertEqual(long.shape, PubNubShape(latitude: "latitude", longitude: "longitude", time: "time", timeInSeconds: true))
        // A fix without its time would be stamped on arrival, and pass the window and age rules however late it
        // was sent: refused, as a WebSocket publish without a timestamp is.
        guard case .failure(let untimed) = read(#"{"lat":52.5,"lng":13.4,"note":"ignored"}"#) else {
            return XCTFail("a fix without a time was accepted")
        }
        XCTAssertEqual(untimed.code, .invalidPosition)
    }

    func testWhatIsNotAPositionIsRefusedNamingTheField() {
        XCTAssertEqual(refusal(#"{"lat":52.5}"#)?.message, "a position needs one of lng, lon, longitude")
        XCTAssertEqual(refusal(#"{"lat":1,"latitude":1,"lng":2}"#)?.message, "give only one of lat, latitude")
        XCTAssertEqual(refusal(#"{"lat":"52.5","lng":13.4}"#)?.message, "lat must be a number")
        XCTAssertEqual(refusal(#"{"lat":true,"lng":13.4}"#)?.code, .invalidPosition, "a boolean is not a number")
        XCTAssertEqual(refusal(#"{"lat":91,"lng":13.4,"timestamp":\#(now)}"#)?.code, .invalidPosition)
        XCTAssertEqual(refusal(#"{"lat":1,"lng":181,"timestamp":\#(now)}"#)?.code, .invalidPosition)
        XCTAssertEqual(refusal(#"{"lat":1,"lng":2,"heading":360,"timestamp":\#(now)}"#)?.code, .invalidPosition)
        XCTAssertEqual(refusal(#"{"lat":1,"lng":2,"ts":-5}"#)?.code, .invalidPosition)
        XCTAssertEqual(refusal(#"{"lat":1,"lng":2,"timestamp":\#(now + 3_600_000)}"#)?.code, .invalidPosition, "an hour ahead")
        XCTAssertEqual(refusal(#"[52.5,13.4]"#)?.code, .invalidPosition)
        XCTAssertEqual(refusal(#"{"lat":1e999,"lng":2}"#)?.code, .badRequest)
        XCTAssertEqual(refusal("not json")?.code, .badRequest)
    }

    func testDeliveredInTheVolunteersShapeOrElseEveryName() throws {
        let position = Position(lat: -34.6, lon: -58.38, accuracy: 5, timestamp: 1_763_757_600_250)
        let seconds = PubNubShape(latitude: "lat", longitude: "lng", time: "ts", timeInSeconds: true)
        let inShape = try XCTUnwrap(JSONSerialization.jsonObject(with: PubNubPosition.message(position, shape: seconds)) as? [String: Any])
        XCTAssertEqual(Set(inShape.keys), ["lat", "lng", "ts", "accuracy"])
        XCTAssertEqual(inShape["ts"] as? Double, 1_763_757_600.25)
        let full = try XCTUnwrap(JSONSerialization.jsonObject(with: PubNubPosition.message(position, shape: nil)) as? [String: Any])
        XCTAssertEqual(Set(full.keys), ["lat", "latitude", "lng", "lon", "longitude", "timestamp", "accuracy"])
        XCTAssertEqual((full["timestamp"] as? NSNumber)?.int64Value, 1_763_757_600_250)
    }
}
