import BrokerProtocol
import XCTest

@testable import BrokerCore

/// The events a donation's durable changes cause, as Ponte's state machine moves it.
final class DonationChangeEventsTests: XCTestCase {
    private var revision: Int64 = 0

    private func donation(_ state: DonationState, volunteer: String? = "vol@example.org", incarnation: String = "i-1") -> Donation {
        Donation(
            id: "d-1", donor: "donor@example.org", volunteer: state == .created && volunteer == nil ? nil : volunteer, state: state,
            home: Home(lat: 1, lon: 2, label: "Home"), institution: Institution(lat: 3, lon: 4, name: "Caritas"), createdAt: 0, updatedAt: 0,
            incarnation: incarnation)
    }

    private func kinds(_ old: Donation?, _ new: Donation?) -> [TrackingEvent.Kind] {
        revision += 1
        return DonationChangeEvents.events(of: DonationChange(id: "d-1", revision: revision, old: old, new: new), at: 5).map(\.kind)
    }

    func testAWholeDonationTellsStartedPausedResumedAndEnded() {
        XCTAssertEqual(kinds(nil, donation(.created, volunteer: nil)), [], "created: nothing to tell yet")
        XCTAssertEqual(kinds(donation(.created, volunteer: nil), donation(.created)), [], "assigned: not yet on the way")
        XCTAssertEqual(kinds(donation(.created), donation(.beingLookedFor)), [.started(.home)])
        XCTAssertEqual(kinds(donation(.beingLookedFor), donation(.pickedByVolunteer)), [.paused(.pickedByVolunteer)])
        XCTAssertEqual(kinds(donation(.pickedByVolunteer), donation(.beingTakenTo)), [.resumed(.institution)])
        XCTAssertEqual(kinds(donation(.beingTakenTo), donation(.delivered)), [.ended(.delivered)])
    }

    func testADroppedAssignmentPausesAndTheNextVolunteerStartsAgain() {
        XCTAssertEqual(kinds(donation(.beingLookedFor), donation(.created, volunteer: nil)), [.paused(.created)])
        XCTAssertEqual(kinds(donation(.created, volunteer: "other@example.org"), donation(.beingLookedFor, volunteer: "other@example.org")), [.started(.home)])
        XCTAssertEqual(
            kinds(donation(.beingLookedFor), donation(.beingLookedFor, volunteer: "other@example.org")), [.started(.home)],
            "another volunteer on the way is a new start")
    }

    func testEndsAreToldOnceWhateverEndsThem() {
        XCTAssertEqual(kinds(donation(.created), donation(.cancelled)), [.ended(.cancelled)])
        XCTAssertEqual(kinds(donation(.beingLookedFor), nil), [.ended(.deleted)])
        XCTAssertEqual(kinds(donation(.cancelled), nil), [], "a deleted donation that had ended ended already")
        XCTAssertEqual(kinds(donation(.delivered), donation(.delivered)), [])
    }

    func testADonationMadeAgainUnderItsIdEndsTheOldOneAndStartsItsOwn() {
        revision += 1
        let events = DonationChangeEvents.events(
            of: DonationChange(id: "d-1", revision: revision, old: donation(.beingLookedFor, incarnation: "old"), new: donation(.beingLookedFor, incarnation: "new")),
            at: 5)
        XCTAssertEqual(events.map(\.kind), [.ended(.deleted), .started(.home)])
        XCTAssertEqual(events.map(\.incarnation), ["old", "new"])
        XCTAssertNotEqual(events[0].identity, events[1].identity)
    }

    func testAChangeThatMovesNothingTellsNothing() {
        var moved = donation(.beingLookedFor)
        moved.home = Home(lat: 9, lon: 9, label: "New home")
        XCTAssertEqual(kinds(donation(.beingLookedFor), moved), [], "a corrected address is no event")
    }

    func testTheSameChangeDecidedTwiceHasOneIdentity() {
        let change = DonationChange(id: "d-1", revision: 42, old: donation(.created), new: donation(.beingLookedFor))
        XCTAssertEqual(
            DonationChangeEvents.events(of: change, at: 1).map(\.identity), DonationChangeEvents.events(of: change, at: 2).map(\.identity))
    }
}
