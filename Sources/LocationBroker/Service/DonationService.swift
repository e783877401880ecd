import BrokerProtocol
import Logging

/// The backend's operations on donations: validate, check the move against Ponte's state machine, make it
/// durable, then update the gates (and so the live subscribers) before the caller replies.
struct DonationService: Sendable {
    let store: any DonationStore
    let hub: Hub
    let logger: Logger
    /// Changes to one donation run one at a time; donations on different stripes run in parallel.
    private let stripes: [AsyncLock]

    init(store: any DonationStore, hub: Hub, logger: Logger) {
        self.store = store
        self.hub = hub
        self.logger = logger
        self.stripes = (0..<32).map { _ in AsyncLock() }
    }

    private func stripe(_ id: String) -> AsyncLock {
        var hasher = Hasher()
        hasher.combine(id)
        return stripes[Int(UInt(bitPattern: hasher.finalize()) % UInt(stripes.count))]
    }

    /// A refused backend request.
    struct Refusal: Error {
        let status: Int
        let error: BrokerError
    }

    /// Creates or changes a donation.
    /// - Returns: the stored donation.
    /// - Throws: ``Refusal`` (400 bad input, 409 illegal transition), or a store error.
    func put(id: String, _ request: DonationUpdate) async throws -> Donation {
        guard DonationID.isValid(id) else {
            throw Refusal(status: 400, error: BrokerError(.badRequest, "donation id must be 1 to 128 characters of letters, digits, '.', '_', ':' or '-'"))
        }
        let update: DonationUpdate
        switch request.validated() {
        case .success(let valid): update = valid
        case .failure(let error): throw Refusal(status: 400, error: error)
        }
        return try await stripe(id).withLock {
            let old = try await store.donation(id: id)
            let now = hub.clock()
            if let old {
                if old.state.isTerminal && (old.volunteer != update.volunteer || old.state != update.state || old.home != update.home || old.institution != update.institution) {
                    throw Refusal(status: 409, error: BrokerError(.illegalTransition, "the donation is \(old.state.rawValue) and can no longer change"))
                }
                if old.donor != update.donor {
                    throw Refusal(status: 409, error: BrokerError(.illegalTransition, "a donation's donor cannot change (it is \(old.donor))"))
                }
                if let refusal = DonationTransition.refusal(from: old.stage, to: .init(update.state, volunteer: update.volunteer)) {
                    throw Refusal(status: 409, error: BrokerError(.illegalTransition, refusal))
                }
            }
            let donation = Donation(
                id: id, donor: update.donor, volunteer: update.volunteer, state: update.state, home: update.home,
                institution: update.institution, createdAt: old?.createdAt ?? now, updatedAt: now)
            if let old, old.state == donation.state, old.volunteer == donation.volunteer, old.home == donation.home,
                old.institution == donation.institution
            {
                return old  // nothing changed but the clock: keep the stored record as it is
            }
            try await store.save(donation)
            hub.apply(old: old, new: donation)
            hub.metrics.donationUpdates.increment()
            logger.info(
                "donation changed",
                metadata: [
                    "donation": "\(id)", "from": "\(old?.state.rawValue ?? "-")", "to": "\(donation.state.rawValue)",
                ])
            return donation
        }
    }

    /// The donation, or `nil`.
    func get(id: String) async throws -> Donation? {
        guard DonationID.isValid(id) else { return nil }
        return try await store.donation(id: id)
    }

    /// Deletes a donation; its subscribers are told `deleted`.
    /// - Returns: whether it existed.
    func delete(id: String) async throws -> Bool {
        guard DonationID.isValid(id) else { return false }
        return try await stripe(id).withLock {
            guard let old = try await store.donation(id: id) else { return false }
            guard try await store.delete(id: id) else { return false }
            hub.apply(old: old, new: nil)
            hub.metrics.donationUpdates.increment()
            logger.info("donation deleted", metadata: ["donation": "\(id)"])
            return true
        }
    }
}
