import BrokerProtocol
import XCTest

/// Ponte's state machine, written out as the full table of moves between stages.
final class DonationStateMachineTests: XCTestCase {
    typealias Stage = DonationTransition.Stage

    private static let volunteer = "v@x.org"
    private static let other = "w@x.org"

    /// Every stage a donation can be in, as (state, has volunteer).
    private static let stages: [Stage] = [
        Stage(.created, volunteer: nil),
        Stage(.created, volunteer: volunteer),
        Stage(.beingLookedFor, volunteer: volunteer),
        Stage(.deliveredByDonor, volunteer: volunteer),
        Stage(.pickedByVolunteer, volunteer: volunteer),
        Stage(.beingTakenTo, volunteer: volunteer),
        Stage(.delivered, volunteer: volunteer),
        Stage(.cancelled, volunteer: nil),
        Stage(.cancelled, volunteer: volunteer),
    ]

    /// The moves Ponte allows with the same volunteer (or none), besides staying put.
    private static let allowed: Set<String> = [
        "CREATED/- -> CREATED/v", "CREATED/- -> CANCELLED/-", "CREATED/- -> CANCELLED/v",
        "CREATED/v -> CREATED/-", "CREATED/v -> BEING-LOOKED-FOR/v", "CREATED/v -> CANCELLED/-", "CREATED/v -> CANCELLED/v",
        "BEING-LOOKED-FOR/v -> CREATED/-", "BEING-LOOKED-FOR/v -> DELIVERED-BY-DONOR/v", "BEING-LOOKED-FOR/v -> PICKED-BY-VOLUNTEER/v",
        "BEING-LOOKED-FOR/v -> CANCELLED/-", "BEING-LOOKED-FOR/v -> CANCELLED/v",
        "DELIVERED-BY-DONOR/v -> BEING-TAKEN-TO/v", "DELIVERED-BY-DONOR/v -> CANCELLED/-", "DELIVERED-BY-DONOR/v -> CANCELLED/v",
        "PICKED-BY-VOLUNTEER/v -> BEING-TAKEN-TO/v", "PICKED-BY-VOLUNTEER/v -> CANCELLED/-", "PICKED-BY-VOLUNTEER/v -> CANCELLED/v",
        "BEING-TAKEN-TO/v -> DELIVERED/v",
    ]

    private static func name(_ stage: Stage) -> String {
        "\(stage.state.rawValue)/\(stage.volunteer == nil ? "-" : "v")"
    }

    func testTheWholeTable() {
        for from in Self.stages {
            for to in Self.stages {
                let move = "\(Self.name(from)) -> \(Self.name(to))"
                let refusal = DonationTransition.refusal(from: from, to: to)
                if from == to || Self.allowed.contains(move) {
                    XCTAssertNil(refusal, "\(move) should be allowed: \(refusal ?? "")")
                } else {
                    XCTAssertNotNil(refusal, "\(move) should be refused")
                }
            }
        }
    }

    func testTheVolunteerIsFixedOnceTheTripStarts() {
        XCTAssertNil(DonationTransition.refusal(from: Stage(.created, volunteer: Self.volunteer), to: Stage(.created, volunteer: Self.other)))
        for state in [DonationState.beingLookedFor, .deliveredByDonor, .pickedByVolunteer, .beingTakenTo] {
            XCTAssertEqual(
                DonationTransition.refusal(from: Stage(state, volunteer: Self.volunteer), to: Stage(state, volunteer: Self.other)),
                "the volunteer cannot change once the trip has started")
        }
        XCTAssertNotNil(DonationTransition.refusal(from: Stage(.created, volunteer: Self.volunteer), to: Stage(.beingLookedFor, volunteer: Self.other)))
    }

    func testRefusalsSayWhy() {
        XCTAssertEqual(DonationTransition.refusal(from: Stage(.beingTakenTo, volunteer: Self.volunteer), to: Stage(.cancelled, volunteer: Self.volunteer)),
                       "a donation on its way to the institution can no longer be cancelled")
        XCTAssertEqual(DonationTransition.refusal(from: Stage(.delivered, volunteer: Self.volunteer), to: Stage(.beingTakenTo, volunteer: Self.volunteer)),
                       "the donation is DELIVERED and can no longer change")
        XCTAssertEqual(DonationTransition.refusal(from: Stage(.created, volunteer: nil), to: Stage(.beingLookedFor, volunteer: nil)),
                       "a donation in BEING-LOOKED-FOR must have a volunteer")
    }

    func testTrackableStatesAndDestinations() {
        for state in DonationState.allCases {
            switch state {
            case .beingLookedFor: XCTAssertEqual(state.destination, .home)
            case .beingTakenTo: XCTAssertEqual(state.destination, .institution)
            default: XCTAssertNil(state.destination, state.rawValue)
            }
            XCTAssertEqual(state.isTrackable, state.destination != nil)
            XCTAssertEqual(state.isTerminal, state == .delivered || state == .cancelled)
        }
    }
}
