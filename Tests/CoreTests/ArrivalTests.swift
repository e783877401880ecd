import BrokerProtocol
import XCTest

@testable import BrokerCore

/// `arrival` is told once, when a kept position first comes within the radius of the current destination.
final class ArrivalTests: XCTestCase {
    func testArrivalIsAnnouncedOnceAndToALateSubscriberToo() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        let (_, sink) = try fixture.watcher()
        fixture.publish(metres: 900)
        XCTAssertEqual(try sink.frames().map(\.type), ["presence", "position"], "900 m away: not arrived")

        fixture.clock.advance(by: 1_000)
        fixture.publish(metres: 100)
        let frames = try sink.frames()
        XCTAssertEqual(frames.map(\.type), ["position", "arrival"])
        guard case .arrival(let arrival) = frames.last else { return }
        XCTAssertEqual(arrival.place, .home)
        XCTAssertEqual(arrival.distance, 100, accuracy: 0.2)

        fixture.clock.advance(by: 1_000)
        fixture.publish(metres: 50)
        XCTAssertEqual(try sink.frames().map(\.type), ["position"], "told once")

        let (connection, late) = fixture.connect()
        XCTAssertNil(fixture.hub.subscribe(connection, .init(target: .donation("d-1"))))
        XCTAssertEqual(try late.frames().map(\.type), ["subscribed", "arrival"])
    }

    func testANewDestinationWaitsForItsOwnArrival() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        let (_, sink) = try fixture.watcher()
        fixture.publish(metres: 10)
        XCTAssertEqual(try sink.frames().map(\.type), ["presence", "position", "arrival"])
        // Picked up, then taken to the institution: the home arrival does not count for it.
        fixture.move(to: .pickedByVolunteer)
        fixture.move(to: .beingTakenTo)
        fixture.clock.advance(by: 1_000)
        fixture.publish(metres: 20)
        XCTAssertEqual(
            try sink.frames().map(\.type), ["state", "state", "presence", "position"],
            "the resume says where presence stands; still far from the institution")
    }
    /// The keeper skips a destination whose latitude alone is farther than the radius (a great circle is never
    /// shorter than its north-south part), so most publishes cost no trigonometry; the radius stays exact: due
    /// north, just outside and just inside; due east, where latitude says nothing.
    func testTheArrivalRadiusIsExactDueNorthAndDueEast() throws {
        for bearing in [0.0, 90.0] {
            let fixture = HubFixture()
            fixture.move(to: .beingLookedFor)
            let (_, sink) = try fixture.watcher()
            func publish(_ metres: Double) {
                let point = Geodesy.destination(fromLat: HubFixture.home.lat, lon: HubFixture.home.lon, bearing: bearing, distance: metres)
                fixture.clock.advance(by: 1_000)
                _ = fixture.hub.publish(
                    as: fixture.volunteer, position: Position(lat: point.lat, lon: point.lon, accuracy: 5, speed: 8, heading: 0, timestamp: fixture.clock.now))
            }
            publish(150.5)
            XCTAssertEqual(try sink.frames().map(\.type), ["presence", "position"], "bearing \(bearing): 150.5 m is outside 150 m")
            publish(149.5)
            XCTAssertEqual(try sink.frames().map(\.type), ["position", "arrival"], "bearing \(bearing): 149.5 m is inside 150 m")
        }
    }
}
