import BrokerClient
import BrokerProtocol
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker

/// The donor's whole journey, as Ponte's test case "Geolocalizar un voluntario" describes it, and beyond.
final class DonorJourneyTests: XCTestCase {
    private let volunteerID = "vol@example.org"
    private let donorID = "donor@example.org"

    func testTheDonorWatchesTheWholeTripAndNothingAfterIt() async throws {
        let live = try await startBroker { $0.publishRate = 1000; $0.publishBurst = 1000 }
        try await live.put("d-1", state: .created)
        try await live.put("d-1", state: .beingLookedFor)
        let volunteer = try await live.connect(volunteerID)
        let donor = try await live.connect(donorID)

        // Before the first fix the donor is told it is waiting: no last position, volunteer offline.
        try await donor.send(.subscribe(.init(id: "s1", target: .donation("d-1"))))
        guard case .subscribed(let subscribed) = try await donor.next() else { return XCTFail("not subscribed") }
        XCTAssertEqual(subscribed.re, "s1")
        XCTAssertEqual(subscribed.channel, volunteerID)
        XCTAssertEqual(subscribed.state, .beingLookedFor)
        XCTAssertEqual(subscribed.destination, .home)
        XCTAssertEqual(subscribed.home, LiveBroker.home)
        XCTAssertEqual(subscribed.institution, LiveBroker.institution)
        XCTAssertNil(subscribed.last)
        XCTAssertEqual(subscribed.online, false)

        // The volunteer drives towards the home; the donor sees them come online and move.
        let far = position(metresFromHome: 2_000)
        let first = try await volunteer.publish(far, id: "p1")
        XCTAssertEqual(first.re, "p1")
        XCTAssertTrue(first.tracking)
        XCTAssertEqual(first.watchers, 1)
        let firstSeq = try XCTUnwrap(first.seq)
        guard case .presence(let presence) = try await donor.next() else { return XCTFail("no presence") }
        XCTAssertTrue(presence.online)
        XCTAssertNotNil(presence.lastSeen)
        guard case .position(let update) = try await donor.next() else { return XCTFail("no position") }
        XCTAssertEqual(update.position, far)

        let close = position(metresFromHome: 100)
        let second = try await volunteer.publish(close)
        let secondSeq = try XCTUnwrap(second.seq)
        XCTAssertGreaterThan(secondSeq, firstSeq, "the volunteer's own numbering goes on")
        guard case .position(let near) = try await donor.next() else { return XCTFail("no position") }
        XCTAssertEqual(near.position, close)
        XCTAssertEqual(near.seq, update.seq + 1, "the donor's numbering goes on by one")
        guard case .arrival(let atHome) = try await donor.next() else { return XCTFail("no arrival") }
        XCTAssertEqual(atHome.place, .home)
        XCTAssertEqual(atHome.donation, "d-1")
        XCTAssertEqual(atHome.distance, 100, accuracy: 0.5)

        // Picked up: tracking pauses, and positions are neither kept nor forwarded.
        try await live.put("d-1", state: .pickedByVolunteer)
        let frame1 = try await donor.next()
        XCTAssertEqual(frame1, .state(.init(channel: volunteerID, donation: "d-1", state: .pickedByVolunteer)))
        let paused = try await volunteer.publish(position(metresFromHome: 0))
        XCTAssertFalse(paused.tracking)
        XCTAssertNil(paused.seq)
        XCTAssertEqual(paused.watchers, 0)
        try await donor.expectNothingPending()

        // Both confirmed: tracking resumes towards the institution.
        try await live.put("d-1", state: .beingTakenTo)
        let frame2 = try await donor.next()
        XCTAssertEqual(frame2, .state(.init(channel: volunteerID, donation: "d-1", state: .beingTakenTo)))
        guard case .presence(let presence) = try await donor.next() else { return XCTFail("no presence after the resume") }
        XCTAssertTrue(presence.online, "presence was not told during the pause: the resume says it")
        let institution = LiveBroker.institution
        let atDoor = Position(lat: institution.lat + 0.0005, lon: institution.lon, speed: 2, heading: 180, timestamp: WallClock.system.now())
        let resumed = try await volunteer.publish(atDoor)
        XCTAssertGreaterThan(try XCTUnwrap(resumed.seq), secondSeq, "seq rises with each kept position")
        guard case .position(let afterPause) = try await donor.next() else { return XCTFail("no position after resuming") }
        XCTAssertEqual(afterPause.seq, near.seq + 1, "the pause took no number in the donor's view")
        guard case .arrival(let atInstitution) = try await donor.next() else { return XCTFail("no arrival at the institution") }
        XCTAssertEqual(atInstitution.place, .institution)

        // Delivered: the donor is told, and nothing of the volunteer reaches them afterwards.
        try await live.put("d-1", state: .delivered)
        let frame3 = try await donor.next()
        XCTAssertEqual(frame3, .unsubscribed(.init(re: nil, channel: volunteerID, donation: "d-1", reason: .delivered)))
        let after = try await volunteer.publish(atDoor)
        XCTAssertFalse(after.tracking)
        try await donor.expectNothingPending()

        await donor.close()
        await volunteer.close()
        try await live.stop()
    }

    func testAfterUnsubscribedNothingOfTheChannelReachesTheDonorWhateverTheVolunteerDoes() async throws {
        let live = try await startBroker { $0.publishRate = 1000; $0.publishBurst = 1000 }
        try await live.put("d-1", state: .beingLookedFor)
        try await live.put("d-1", state: .pickedByVolunteer)
        try await live.put("d-1", state: .beingTakenTo)
        let volunteer = try await live.connect(volunteerID)
        let donor = try await live.connect(donorID)
        try await donor.send(.subscribe(.init(target: .donation("d-1"))))
        guard case .subscribed = try await donor.next() else { return XCTFail("not subscribed") }
        _ = try await volunteer.publish(position(metresFromHome: 2_000))
        _ = try await donor.next()  // presence
        _ = try await donor.next()  // position
        try await live.put("d-1", state: .delivered)
        let ended = try await donor.next()
        XCTAssertEqual(ended, .unsubscribed(.init(re: nil, channel: volunteerID, donation: "d-1", reason: .delivered)))

        // The volunteer goes offline, comes back, publishes, and starts another donor's trip.
        await volunteer.close()
        try await waitUntil("the volunteer's socket is gone") { live.broker.hub.connectionCount == 1 }
        let again = try await live.connect(volunteerID)
        _ = try await again.publish(position(metresFromHome: 1_000))
        try await live.put("d-2", donor: "other@example.org", state: .beingLookedFor)
        _ = try await again.publish(position(metresFromHome: 900))
        await again.close()
        try await waitUntil("the volunteer's second socket is gone") { live.broker.hub.connectionCount == 1 }
        try await donor.expectNothingPending()
        await donor.close()
        try await live.stop()
    }

    func testEveryDonorReceivesTheSameBytes() async throws {
        let live = try await startBroker()
        try await live.put("d-1", state: .beingLookedFor)
        let volunteer = try await live.connect(volunteerID)
        let donor = try await live.connect(donorID)
        let secondScreen = try await live.connect(donorID)  // the same donor on a tablet and a phone
        for screen in [donor, secondScreen] {
            try await screen.send(.subscribe(.init(target: .channel(volunteerID))))
            guard case .subscribed = try await screen.next() else { return XCTFail("not subscribed") }
        }
        let ack = try await volunteer.publish(position(metresFromHome: 500))
        XCTAssertEqual(ack.watchers, 2)
        var texts: [String] = []
        for screen in [donor, secondScreen] {
            _ = try await screen.next()  // presence
            guard case .frame(.position, let text) = await screen.nextEvent() else { return XCTFail("no position") }
            texts.append(text)
        }
        XCTAssertEqual(texts[0], texts[1])
        try await live.stop()
    }

    func testAVolunteerWhoDisconnectsGoesOffline() async throws {
        let live = try await startBroker()
        try await live.put("d-1", state: .beingLookedFor)
        let volunteer = try await live.connect(volunteerID)
        let donor = try await live.connect(donorID)
        try await donor.send(.subscribe(.init(target: .channel(volunteerID))))
        _ = try await donor.next()
        _ = try await volunteer.publish(position(metresFromHome: 900))
        guard case .presence(let online) = try await donor.next(), online.online else { return XCTFail("not online") }
        _ = try await donor.next()  // the position
        await volunteer.close()
        guard case .presence(let offline) = try await donor.next() else { return XCTFail("no offline presence") }
        XCTAssertFalse(offline.online)
        XCTAssertEqual(offline.lastSeen, online.lastSeen)
        try await live.stop()
    }
}
