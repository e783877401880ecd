import BrokerClient
import BrokerProtocol
import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// The hand-over at the donor's home pauses tracking. While it lasts the donor learns nothing of the volunteer,
/// not even whether they are online while they drive somebody else's donation; and a donor whose connection was
/// lost during it subscribes at once, is told the trip is paused, and hears the resume without asking again.
final class PausedDonorTests: XCTestCase {
    func testAPausedDonorHearsNothingOfTheVolunteersWorkForSomebodyElse() async throws {
        let live = try await startBroker()
        try await live.put("d-alice", donor: "alice@example.org", state: .beingLookedFor)
        try await live.put("d-bob", donor: "bob@example.org", state: .beingLookedFor)
        let alice = try await live.connect("alice@example.org")
        let bob = try await live.connect("bob@example.org")
        for (donor, donation) in [(alice, "d-alice"), (bob, "d-bob")] {
            try await donor.send(.subscribe(.init(target: .donation(donation))))
            guard case .subscribed = try await donor.next() else { return XCTFail("\(donation) not subscribed") }
        }
        try await live.put("d-alice", donor: "alice@example.org", state: .pickedByVolunteer)
        guard case .state(let paused) = try await alice.next() else { return XCTFail("alice was not told of the pause") }
        XCTAssertFalse(paused.tracking)

        // The volunteer comes online, drives Bob's donation, and drops off.
        let volunteer = try await live.connect("vol@example.org")
        let fix = try await volunteer.publishKept(position(metresFromHome: 900))
        guard case .presence(let online) = try await bob.next(), online.online else { return XCTFail("bob was not told online") }
        guard case .position(let update) = try await bob.next() else { return XCTFail("bob got no position") }
        XCTAssertEqual(update.position, fix)
        await volunteer.close()
        guard case .presence(let offline) = try await bob.next(), !offline.online else { return XCTFail("bob was not told offline") }

        try await alice.expectNothingPending()
    }

    func testADonorWhoReconnectsDuringTheHandOverIsSubscribedPausedAndHearsTheResume() async throws {
        let live = try await startBroker()
        try await live.put("d-1", state: .beingLookedFor)
        let volunteer = try await live.connect("vol@example.org")
        _ = try await volunteer.publishKept(position(metresFromHome: 20))
        try await live.put("d-1", state: .pickedByVolunteer)

        // The donor's phone lost its connection during the hand-over and comes back.
        let donor = try await live.connect("donor@example.org")
        try await donor.send(.subscribe(.init(id: "s", target: .donation("d-1"), since: 0)))
        guard case .subscribed(let subscribed) = try await donor.next() else { return XCTFail("a paused donation was not subscribed") }
        XCTAssertEqual(subscribed.re, "s")
        XCTAssertEqual(subscribed.state, .pickedByVolunteer)
        XCTAssertFalse(subscribed.tracking)
        XCTAssertNil(subscribed.destination)
        XCTAssertNil(subscribed.last, "nothing kept before the pause is given")
        XCTAssertNil(subscribed.online, "presence is not told while paused")
        // Subscribing by channel finds the paused donation too.
        try await donor.send(.subscribe(.init(id: "c", target: .channel("vol@example.org"))))
        guard case .subscribed(let byChannel) = try await donor.next() else { return XCTFail("not subscribed by channel") }
        XCTAssertEqual(byChannel.donation, "d-1")
        _ = try await volunteer.publish(position(metresFromHome: 200))
        try await donor.expectNothingPending()

        // Both confirmed: the resume reaches the donor, then presence, then every position, without asking again.
        try await live.put("d-1", state: .beingTakenTo)
        guard case .state(let resumed) = try await donor.next() else { return XCTFail("the resume did not reach the donor") }
        XCTAssertTrue(resumed.tracking)
        XCTAssertEqual(resumed.destination, .institution)
        guard case .presence(let presence) = try await donor.next() else { return XCTFail("no presence after the resume") }
        XCTAssertTrue(presence.online)
        var sent: [Position] = []
        for metres in [1_000.0, 900, 800] { sent.append(try await volunteer.publishKept(position(metresFromHome: metres))) }
        var received: [ServerFrame.PositionUpdate] = []
        while received.count < sent.count {
            guard case .position(let update) = try await donor.next() else { return XCTFail("expected positions") }
            received.append(update)
        }
        XCTAssertEqual(received.map(\.position), sent)
        XCTAssertEqual(received.map(\.seq), received.indices.map { received[0].seq + Int64($0) }, "one after the other in the donor's view")
    }

    func testADonationThatHasNotStartedIsStillNotTrackable() async throws {
        let live = try await startBroker()
        try await live.put("d-1", state: .created)
        let donor = try await live.connect("donor@example.org")
        try await donor.send(.subscribe(.init(id: "s", target: .donation("d-1"))))
        guard case .error(let refused) = try await donor.next() else { return XCTFail("a donation that has not started was subscribed") }
        XCTAssertEqual(refused.code, .notTrackable)
    }
}
