import BrokerProtocol

/// What a connection opened with a watch link may do: watch one donation, in the incarnation the link was made
/// for, and nothing else (no publish, no channel, no other donation, not even of the same donor).
package struct WatchScope: Sendable, Equatable {
    package let donation: String
    package let incarnation: String
    package let donor: String

    package init(donation: String, incarnation: String, donor: String) {
        self.donation = donation
        self.incarnation = incarnation
        self.donor = donor
    }

    /// The identity a watch-link connection goes by. It holds a space, which no token identity can
    /// (``Identity/canonical(_:)`` refuses whitespace), so it never names a real person's channel and never
    /// matches a donation's donor: the connection is not its donor for anything but this one donation.
    package static func identity(for donation: String) -> String { "watch-link \(donation)" }

    /// Whether the link opens this donation gate: same id, same incarnation, same donor.
    func opens(_ gate: DonationGate) -> Bool {
        gate.id == donation && gate.incarnation == incarnation && gate.donor == donor
    }

    /// The refusal for a subscribe the link does not allow before any donation is looked up, so that it reveals
    /// nothing about other donations; `nil` for a subscribe to its own donation.
    package func refusal(for target: ClientFrame.Target) -> BrokerError? {
        switch target {
        case .donation(let id) where id == donation:
            return nil
        case .donation, .channel:
            return BrokerError(.watchOnly, "this watch link opens donation \(donation) only; subscribe with {\"donation\":\"\(donation)\"}")
        }
    }

    /// The refusal for a publish: a watch link only watches.
    package var publishRefusal: BrokerError {
        BrokerError(.watchOnly, "this watch link can only watch donation \(donation); it cannot publish")
    }
}
