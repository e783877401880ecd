import BrokerProtocol

/// Where donations live between restarts. SQLite is the embedded default; the interface is kept small so a
/// clustered store can take its place.
///
/// Every method returns only after the change is durable: a crash right after it loses nothing it reported.
protocol DonationStore: Sendable {
    /// The donation with this id, or `nil`.
    func donation(id: String) async throws -> Donation?
    /// Inserts or replaces the donation.
    func save(_ donation: Donation) async throws
    /// Removes the donation; returns whether it existed.
    func delete(id: String) async throws -> Bool
    /// Every donation that has not ended (neither DELIVERED nor CANCELLED), to rebuild the gates at start.
    func activeDonations() async throws -> [Donation]
}
