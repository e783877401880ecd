import BrokerProtocol

/// The donation's situation in the words a donor understands.
public enum DonationWords {
    /// The headline: "On the way to your home", "Picked up — waiting for your confirmation (paused)", ...
    public static func status(_ state: DonationState?, tracking: Bool, arrived: Destination?) -> String {
        switch state {
        case nil: "Connecting to the broker…"
        case .beingLookedFor?: arrived == .home ? "Arrived at your home" : "On the way to your home"
        case .beingTakenTo?: arrived == .institution ? "Arrived at the institution" : "On the way to the institution"
        case .pickedByVolunteer?: "Picked up — waiting for your confirmation (paused)"
        case .deliveredByDonor?: "Handed over — waiting for the volunteer to confirm (paused)"
        case .created?: "Not on the way yet (paused)"
        case .delivered?: "Delivered to the institution"
        case .cancelled?: "Cancelled"
        }
    }

    /// The place the volunteer is heading to, with its label or name when the broker gave one.
    public static func place(_ destination: Destination, home: Home?, institution: Institution?) -> String {
        switch destination {
        case .home:
            if let label = home?.label.map(TerminalText.sanitized), !label.isEmpty { return "Your home, \(label)" }
            return "Your home"
        case .institution:
            if let name = institution?.name.map(TerminalText.sanitized), !name.isEmpty { return name }
            return "The institution"
        }
    }

    /// The place as the end of a sentence: "your home", "Caritas Palermo", "the institution".
    static func placeInSentence(_ destination: Destination, institution: Institution?) -> String {
        switch destination {
        case .home:
            return "your home"
        case .institution:
            if let name = institution?.name.map(TerminalText.sanitized), !name.isEmpty { return name }
            return "the institution"
        }
    }
}
