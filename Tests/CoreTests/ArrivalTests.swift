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
        XCTAssertEqual(try sink.frames().map(\.type), ["state", "state", "position"], "still far from the institution")
    }
}
