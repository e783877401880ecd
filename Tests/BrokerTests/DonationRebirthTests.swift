import BrokerProtocol
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// A donation deleted and made again under the same id is another donation, even when a node sees the two
/// changes as one (a cluster catch-up reads the newest row): the old one's watchers are revoked and see nothing
/// of the new one.
final class DonationRebirthTests: XCTestCase {
    private let volunteerID = "vol@example.org"

    private func donation(donor: String, incarnation: String) -> Donation {
        Donation(
            id: "d-1", donor: donor, volunteer: volunteerID, state: .beingLookedFor, home: LiveBroker.home,
            institution: LiveBroker.institution, createdAt: 0, updatedAt: 0, incarnation: incarnation)
    }

    private func scenario(firstDonor: String, secondDonor: String, secondIncarnation: String) throws -> [ServerFrame] {
        let clock = ManualClock(start: 1_795_000_000_000)
        let hub = Hub(settings: HubSettings(), metrics: BrokerMetrics(), clock: { clock.now })
        hub.apply(DonationChange(id: "d-1", revision: 1, old: nil, new: donation(donor: firstDonor, incarnation: "first")))
        let watcher = hub.connect(.init(identity: firstDonor, expiresAt: .max / 2000), logger: .init(label: "test"))
        XCTAssertNil(hub.subscribe(watcher, .init(target: .donation("d-1"))))
        clock.advance(by: 1_000)
        _ = hub.publish(as: volunteerID, position: position(metresFromHome: 900, timestamp: clock.now))
        _ = try OutboxReader(watcher.outbox).frames()
        // Revision 2 (the delete) is never seen here: revision 3 is the donation made again.
        hub.apply(DonationChange(id: "d-1", revision: 3, old: nil, new: donation(donor: secondDonor, incarnation: secondIncarnation)))
        clock.advance(by: 1_000)
        _ = hub.publish(as: volunteerID, position: position(metresFromHome: 800, timestamp: clock.now))
        return try OutboxReader(watcher.outbox).frames()
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
