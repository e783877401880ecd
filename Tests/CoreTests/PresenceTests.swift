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

/// After `unsubscribed`, nothing of the channel reaches the donor, whatever the volunteer does next.
final class PresenceAfterTheEndTests: XCTestCase {
    func testADeliveredDonationsDonorHearsNothingOfTheVolunteerAfterUnsubscribed() throws {
        for ending in [DonationState.delivered, .cancelled] {
            let fixture = HubFixture()
            fixture.move(to: .beingTakenTo)
            let (volunteer, _) = fixture.connect(fixture.volunteer)
            let (donorConnection, donor) = try fixture.watcher()
            fixture.publish()
            fixture.move(to: ending)
            XCTAssertEqual(try donor.frames().map(\.type).last, "unsubscribed", "\(ending)")
            XCTAssertEqual(donorConnection.subscriptionCount, 0)
            // The volunteer goes offline, publishes, comes back, goes silent, and its next trip starts for another donor.
            fixture.hub.disconnect(volunteer)
            let (again, _) = fixture.connect(fixture.volunteer)
            fixture.publish()
            fixture.move("d-2", to: .beingLookedFor, donor: "other@example.org")
            fixture.clock.advance(by: 2_000)
            fixture.publish()
            fixture.clock.advance(by: 120_000)
            fixture.hub.sweepPresence()
            fixture.hub.disconnect(again)
            XCTAssertEqual(try donor.frames(), [], "\(ending): a frame of a channel the donor no longer watches")
        }
    }

    func testADonorUnsubscribedByTheClientHearsNothingMoreOfTheChannel() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        let (volunteer, _) = fixture.connect(fixture.volunteer)
        let (donorConnection, donor) = try fixture.watcher()
        XCTAssertNil(fixture.hub.unsubscribe(donorConnection, .init(target: .donation("d-1"))))
        XCTAssertEqual(try donor.frames().map(\.type), ["unsubscribed"])
        fixture.publish()
        fixture.hub.disconnect(volunteer)
        fixture.move(to: .pickedByVolunteer)
        fixture.move(to: .beingTakenTo)
        XCTAssertEqual(try donor.frames(), [])
    }
}
