import BrokerProtocol
import XCTest

@testable import BrokerCore

/// A donation deleted and made again under the same id is another donation, even when a node sees the two
/// changes as one (a cluster catch-up reads the newest row): the old one's watchers are revoked and see nothing
/// of the new one.
final class DonationRebirthTests: XCTestCase {
    private let volunteerID = "vol@example.org"

    private func donation(donor: String, incarnation: String) -> Donation {
        Donation(
            id: "d-1", donor: donor, volunteer: volunteerID, state: .beingLookedFor, home: HubFixture.home,
            institution: HubFixture.institution, createdAt: 0, updatedAt: 0, incarnation: incarnation)
    }

    private func scenario(firstDonor: String, secondDonor: String, secondIncarnation: String) throws -> [ServerFrame] {
        let fixture = HubFixture()
        let (clock, hub) = (fixture.clock, fixture.hub)
        hub.apply(DonationChange(id: "d-1", revision: 1, old: nil, new: donation(donor: firstDonor, incarnation: "first")))
        let (connection, watcher) = fixture.connect(firstDonor)
        XCTAssertNil(hub.subscribe(connection, .init(target: .donation("d-1"))))
        clock.advance(by: 1_000)
        _ = hub.publish(as: volunteerID, position: position(metresFromHome: 900, timestamp: clock.now))
        _ = try watcher.frames()
        // Revision 2 (the delete) is never seen here: revision 3 is the donation made again.
        hub.apply(DonationChange(id: "d-1", revision: 3, old: nil, new: donation(donor: secondDonor, incarnation: secondIncarnation)))
        clock.advance(by: 1_000)
        _ = hub.publish(as: volunteerID, position: position(metresFromHome: 800, timestamp: clock.now))
        return try watcher.frames()
    }

    func testTheOldWatcherIsRevokedWhenTheIdComesBackForAnotherDonor() throws {
        let frames = try scenario(firstDonor: "first@example.org", secondDonor: "second@example.org", secondIncarnation: "second")
        XCTAssertEqual(frames.map(\.type), ["unsubscribed"], "revoked, and no position of the new donation")
        guard case .unsubscribed(let end) = frames.first else { return }
        XCTAssertEqual(end.reason, .deleted)
    }

    func testTheOldWatcherIsRevokedWhenTheIdComesBackForTheSameDonor() throws {
        // A watch link of the first donation must not keep watching the second one.
        let frames = try scenario(firstDonor: "donor@example.org", secondDonor: "donor@example.org", secondIncarnation: "second")
        XCTAssertEqual(frames.map(\.type), ["unsubscribed"])
    }
}
