import BrokerCore
import BrokerProtocol

/// Where donations live between restarts: SQLite for one node (the embedded default), PostgreSQL for a cluster.
///
/// Every change carries a revision from one counter per store, so that nodes applying changes in any order
/// (their own, and others' over the cluster bus) keep only the newest, and a node that lost its bus can ask
/// for everything after the last revision it applied.
///
/// Every method returns only after the change is durable: a crash right after it loses nothing it reported.
package protocol DonationStore: Sendable {
    /// The donation with this id, or `nil`.
    func donation(id: String) async throws -> Donation?
    /// Reads the donation, asks `decide` what it becomes, and stores that, as one atomic step: concurrent
    /// changes to one donation, from this node or any other, run one after the other. The events the change
    /// causes (`events`, asked once the change has its revision) go into the event outbox in the same transaction:
    /// stored with the change, or not at all.
    /// - Returns: the change made, or `nil` when `decide` kept the donation as it was (`events` is not asked then).
    /// - Throws: what `decide` or `events` throws (nothing is stored then), or a store error.
    func change(
        id: String, _ decide: @escaping @Sendable (Donation?) throws -> DonationDecision,
        events: @escaping @Sendable (DonationChange) throws -> [OutboxEvent]
    ) async throws -> DonationChange?
    /// Every donation that has not ended (neither DELIVERED nor CANCELLED), with the store's revision when it
    /// was read, to rebuild the gates at start.
    func activeDonations() async throws -> StoreSnapshot
}

/// What a change does to a donation.
package enum DonationDecision: Sendable {
    case keep
    case save(Donation)
    case delete
}

/// A store that cannot be reached now: the request may be retried (HTTP 503).
package struct DonationStoreUnavailable: Error, CustomStringConvertible {
    package let description: String

    package init(description: String) {
        self.description = description
    }
}

/// An error a caller's `decide` throws to refuse a change (a bad request, an illegal transition): every store hands
/// it back as it was thrown, never as a store that cannot be reached.
package protocol DonationChangeRefusal: Error {}
