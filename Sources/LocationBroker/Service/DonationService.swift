import BrokerCore
import BrokerProtocol
import BrokerStorage
import Logging

/// The backend's operations on donations: validate, check the move against Ponte's state machine, make it
/// durable, then update the gates (and so the live subscribers) before the caller replies.
struct DonationService: Sendable {
    let store: any DonationStore
    let hub: Hub
    let metrics: BrokerMetrics
    let clock: WallClock
    let logger: Logger
    /// How a change's trip events are written; `nil` when the broker tells nobody of events.
    let events: DonationEvents?
    /// Changes to one donation run one at a time; donations on different stripes run in parallel.
    private let stripes: [AsyncLock]

    init(store: any DonationStore, hub: Hub, metrics: BrokerMetrics, clock: WallClock, logger: Logger, events: DonationEvents? = nil) {
        self.store = store
        self.hub = hub
        self.metrics = metrics
        self.clock = clock
        self.logger = logger
        self.events = events
        self.stripes = (0..<32).map { _ in AsyncLock() }
    }

    func stripe(_ id: String) -> AsyncLock {
        var hasher = Hasher()
        hasher.combine(id)
        return stripes[Int(UInt(bitPattern: hasher.finalize()) % UInt(stripes.count))]
    }

    /// A refused backend request; thrown from a store change's `decide`, it comes back as it was.
    struct Refusal: DonationChangeRefusal {
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
        // The position events decided before this change are stored before its own, so the backend hears them
        // in the order they happened.
        await events?.recorder.flush()
        let now = clock.now()
        let rows = eventRows(at: now)
        let change = try await stripe(id).withLock { () -> DonationChange? in
            let change = try await store.change(id: id, { old in try Self.decide(id: id, update: update, old: old, now: now) }, events: rows)
            if let change { apply(change) }
            return change
        }
        if let change, let donation = change.new {
            logger.info(
                "donation changed",
                metadata: [
                    "donation": "\(id)", "from": "\(change.old?.state.rawValue ?? "-")", "to": "\(donation.state.rawValue)",
                    "revision": "\(change.revision)",
                ])
            return donation
        }
        // Nothing changed but the clock: the stored record stays as it is.
        guard let stored = try await store.donation(id: id) else {
            throw Refusal(status: 409, error: BrokerError(.illegalTransition, "the donation was deleted while it was being changed; retry"))
        }
        return stored
    }

    /// What `update` does to the stored donation `old`: the checks of Ponte's state machine, made inside the
    /// store's transaction so that they see every change committed before, from any node.
    private static func decide(id: String, update: DonationUpdate, old: Donation?, now: Int64) throws -> DonationDecision {
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
        if let old, old.state == update.state, old.volunteer == update.volunteer, old.home == update.home,
            old.institution == update.institution
        {
            return .keep
        }
        return .save(
            Donation(
                id: id, donor: update.donor, volunteer: update.volunteer, state: update.state, home: update.home,
                institution: update.institution, createdAt: old?.createdAt ?? now, updatedAt: now,
                incarnation: old?.incarnation ?? Self.newIncarnation()))
    }

    /// Brings the gates in line with a change this node made, and counts it and its events.
    func apply(_ change: DonationChange) {
        hub.apply(change)
        metrics.donationUpdates.increment()
        if let events {
            let told = DonationChangeEvents.events(of: change, at: 0)
            for event in told { metrics.events.stored[event.type]?.increment() }
            if !told.isEmpty { events.onStored() }
        }
    }

    /// The outbox rows of a change's events, decided at `now`, for the store to write in the change's transaction.
    private func eventRows(at now: Int64) -> @Sendable (DonationChange) -> [OutboxEvent] {
        guard let events else { return { _ in [] } }
        return { change in
            DonationChangeEvents.events(of: change, at: now).map {
                EventMessage.outboxEvent($0, node: events.node, webhooks: events.webhooks, pushes: events.pushes)
            }
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
            await events?.recorder.flush()
            guard let change = try await store.change(id: id, { old in old == nil ? .keep : .delete }, events: eventRows(at: clock.now()))
            else { return false }
            apply(change)
            // A deleted donation says nothing more to anyone: its browsers' subscriptions go at once.
            try? await events?.outbox.removeSubscriptions(donation: id)
            logger.info("donation deleted", metadata: ["donation": "\(id)"])
            return true
        }
    }
}
