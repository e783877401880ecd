import BrokerProtocol
import XCTest

@testable import BrokerCore

/// Whether the volunteer is online, as their donors are told: on with a publish, off with the last connection or
/// after three silent publish intervals, and never twice in a row.
final class PresenceTests: XCTestCase {
    private let volunteerID = "vol@example.org"
    private let donorID = "donor@example.org"

    func testASilentVolunteerIsReportedOfflineAfterThreeIntervals() throws {
        let fixture = HubFixture()
        let (clock, hub) = (fixture.clock, fixture.hub)
        fixture.move(to: .beingLookedFor)
        let (volunteer, _) = fixture.connect(volunteerID)
        let (donorConnection, donor) = fixture.connect(donorID)
        XCTAssertNil(hub.subscribe(donorConnection, .init(target: .channel(volunteerID))))
        _ = hub.publish(as: volunteer.identity, position: position(metresFromHome: 800, timestamp: clock.now))
        clock.advance(by: 60_000)
        hub.sweepPresence()
        let frames = try donor.frames()
        XCTAssertEqual(frames.map(\.type), ["subscribed", "presence", "position"], "silent for exactly 3 intervals is not yet offline")
        clock.advance(by: 1)
        hub.sweepPresence()
        XCTAssertEqual(try donor.frames(), [.presence(.init(channel: volunteerID, online: false, lastSeen: 1_795_000_000_000))])
    }
}
