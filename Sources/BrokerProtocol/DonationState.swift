/// The states of a Ponte donation, spelled as Ponte's API spelled them.
public enum DonationState: String, Codable, Sendable, CaseIterable {
    /// Waiting for a volunteer, or assigned to one who has not started yet.
    case created = "CREATED"
    /// The volunteer is on the way to the donor's home.
    case beingLookedFor = "BEING-LOOKED-FOR"
    /// The donor says the goods were handed over; waits for the volunteer to confirm.
    case deliveredByDonor = "DELIVERED-BY-DONOR"
    /// The volunteer says the goods were picked up; waits for the donor to confirm.
    case pickedByVolunteer = "PICKED-BY-VOLUNTEER"
    /// Both confirmed; the volunteer drives to the institution.
    case beingTakenTo = "BEING-TAKEN-TO"
    /// At the institution. Final.
    case delivered = "DELIVERED"
    /// Cancelled. Final.
    case cancelled = "CANCELLED"

    /// Whether the donor may watch the volunteer's position in this state.
    public var isTrackable: Bool { destination != nil }

    /// Where the volunteer is heading while the donation is trackable; `nil` in every other state.
    public var destination: Destination? {
        switch self {
        case .beingLookedFor: .home
        case .beingTakenTo: .institution
        default: nil
        }
    }

    /// Whether the trip is paused between its two legs (the hand-over at the donor's home): tracking resumes with
    /// `BEING-TAKEN-TO`. Its donor may stay subscribed, and may subscribe, to learn of the resume.
    public var isPaused: Bool { self == .deliveredByDonor || self == .pickedByVolunteer }

    /// Whether the donation has ended: nothing moves it any more.
    public var isTerminal: Bool { self == .delivered || self == .cancelled }

    /// Whether the donation must name a volunteer in this state.
    public var requiresVolunteer: Bool {
        switch self {
        case .created, .cancelled: false
        default: true
        }
    }
}

/// The place a volunteer is heading to.
public enum Destination: String, Codable, Sendable {
    /// The donor's home, while the donation is `BEING-LOOKED-FOR`.
    case home
    /// The institution, while the donation is `BEING-TAKEN-TO`.
    case institution
}
