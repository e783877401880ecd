/// Ponte's donation state machine: which moves a backend update may make.
///
/// A donation is described here by its state and whether it has a volunteer, because
/// `CREATED` covers both "looking for a volunteer" and "volunteer assigned".
public enum DonationTransition {
    /// The part of a donation that the state machine looks at.
    public struct Stage: Equatable, Sendable {
        public var state: DonationState
        public var volunteer: String?

        public init(_ state: DonationState, volunteer: String?) {
            self.state = state
            self.volunteer = volunteer
        }
    }

    /// Checks a move from `old` to `new`.
    /// - Returns: `nil` when the move is allowed, otherwise a sentence that says why it is not.
    public static func refusal(from old: Stage, to new: Stage) -> String? {
        if new.state.requiresVolunteer && new.volunteer == nil {
            return "a donation in \(new.state.rawValue) must have a volunteer"
        }
        if old == new { return nil }
        let volunteerChanged = old.volunteer != new.volunteer
        switch (old.state, new.state) {
        case (.created, .created):
            // Assigning, dropping or reassigning a volunteer before the trip starts.
            return nil
        case (.created, .beingLookedFor):
            return volunteerChanged ? "the volunteer who starts the trip must be the one assigned" : nil
        case (.beingLookedFor, .created):
            // The volunteer drops the assignment: the donation looks for a volunteer again.
            return new.volunteer == nil ? nil : "a volunteer who drops a donation leaves it with no volunteer"
        case (.beingLookedFor, .deliveredByDonor), (.beingLookedFor, .pickedByVolunteer),
            (.deliveredByDonor, .beingTakenTo), (.pickedByVolunteer, .beingTakenTo),
            (.beingTakenTo, .delivered):
            return volunteerChanged ? "the volunteer cannot change once the trip has started" : nil
        case (.created, .cancelled), (.beingLookedFor, .cancelled),
            (.deliveredByDonor, .cancelled), (.pickedByVolunteer, .cancelled):
            return nil
        case (.beingTakenTo, .cancelled):
            return "a donation on its way to the institution can no longer be cancelled"
        case (.delivered, _), (.cancelled, _):
            return "the donation is \(old.state.rawValue) and can no longer change"
        case (let from, let to) where from == to:
            return "the volunteer cannot change once the trip has started"
        default:
            return "a donation cannot move from \(old.state.rawValue) to \(new.state.rawValue)"
        }
    }
}
