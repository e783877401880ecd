import BrokerProtocol

extension DonationService {
    /// A new donation's incarnation: 16 random bytes in hex. A donation deleted and created again under the same
    /// id gets a new one, which is how a watch link made for the first knows it is not for the second.
    static func newIncarnation() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte, radix: 16).leftPadded(to: 2)
        }.joined()
    }

    /// The donation a watch link may be made for: one that exists and has not ended, with its incarnation.
    /// A donation stored before incarnations existed (a PostgreSQL record of an older broker) is given one here,
    /// through the store like any change, so that every node learns it.
    /// - Returns: `nil` when there is no such donation or it has ended (DELIVERED or CANCELLED).
    func watchable(id: String) async throws -> Donation? {
        guard DonationID.isValid(id), let stored = try await store.donation(id: id), !stored.state.isTerminal else { return nil }
        if stored.incarnation != nil { return stored }
        return try await stripe(id).withLock { () -> Donation? in
            let change = try await store.change(id: id) { old in
                guard var donation = old, donation.incarnation == nil else { return .keep }
                donation.incarnation = Self.newIncarnation()
                return .save(donation)
            } events: { _ in [] }
            if let change { apply(change) }
            guard let donation = try await store.donation(id: id), !donation.state.isTerminal else { return nil }
            return donation
        }
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
