/// The durable queue of events on their way out (webhook, Web Push), and the Web Push subscriptions they go to:
/// SQLite on one node (``SQLiteEventOutbox``), PostgreSQL in a cluster (``PostgresEventOutbox``).
///
/// Each row keeps a delivery state per route. A node sends only rows it leased with `claim`, and reports each
/// outcome with `delivered`, `retry` or `failed`; a node that dies holding a lease loses it when it runs out, and
/// another node sends the row again. One donation's rows go out in the order they were appended: a donation's
/// next row is claimed only when the one before it was delivered or given up. Times are milliseconds since the epoch.
package protocol EventOutbox: Sendable {
    /// Stores `events`, durable on return. An id already stored is left as it is (delivered stays delivered).
    func append(_ events: [OutboxEvent]) async throws
    /// Leases to `node`, until `now + lease`, up to `limit` rows due at `now` on `route`, oldest first: of each
    /// donation only its oldest row still pending on that route, and only when no lease on it is running (this
    /// node's included, so a row is never sent twice at once). Two nodes claiming at once never get the same row.
    func claim(_ route: OutboxRoute, node: String, now: Int64, lease: Int64, limit: Int) async throws -> [ClaimedEvent]
    /// The row went out on `route`. Taken from any node (one whose lease ran out may still have sent it), and
    /// ignored unless the row is pending there.
    func delivered(_ id: String, route: OutboxRoute, node: String, at: Int64) async throws
    /// The attempt failed: the row is due again at `nextAttemptAt`. Ignored unless `node` holds the row's lease.
    /// `error` is kept shortened (see ``OutboxErrorText``).
    func retry(_ id: String, route: OutboxRoute, node: String, attempts: Int, nextAttemptAt: Int64, error: String) async throws
    /// Gave up: kept as `failed` for an operator, and it no longer holds back the donation's later rows. Ignored
    /// unless `node` holds the row's lease.
    func failed(_ id: String, route: OutboxRoute, node: String, attempts: Int, error: String) async throws
    /// Operator: the rows `route` gave up on, oldest first.
    func failedEvents(route: OutboxRoute, limit: Int) async throws -> [FailedEvent]
    /// Operator: sends again the failed row `id` (all failed rows of `route` when `nil`) from its first attempt, due
    /// at `now`. Returns how many rows were queued again.
    func requeue(route: OutboxRoute, id: String?, now: Int64) async throws -> Int
    /// How `route`'s rows stand at `now`.
    func stats(route: OutboxRoute, now: Int64) async throws -> OutboxStats
    /// Forgets the rows that are delivered (or not sent) on both routes and were last delivered before `before`.
    /// Returns how many were forgotten. A forgotten id appended again is a new row.
    func prune(deliveredBefore before: Int64) async throws -> Int

    /// Stores a subscription, replacing the one with the same endpoint for the same donation. Subscriptions of the
    /// donation's earlier incarnations go. Returns false (storing nothing) when the donation already has `limit`
    /// other subscriptions.
    func addSubscription(_ subscription: PushSubscriptionRecord, limit: Int) async throws -> Bool
    /// The donation's subscriptions of this incarnation, oldest first.
    func subscriptions(donation: String, incarnation: String) async throws -> [PushSubscriptionRecord]
    /// Removes the endpoint from every donation (the push service said it is gone).
    func removeSubscription(endpoint: String) async throws
    /// Removes the endpoint from one donation only (its donor turned that donation's pushes off): the same
    /// browser's subscriptions to other donations stay.
    func removeSubscription(endpoint: String, donation: String) async throws
    /// Removes every subscription of the donation: when it ended (after its last push went out) or was deleted.
    func removeSubscriptions(donation: String) async throws
}

/// The rule both stores keep for the text of a failed attempt: short, on one line, cut at a character boundary, so
/// that whatever a remote server answered cannot fill the database or the operator's screen.
package enum OutboxErrorText {
    /// The most UTF-8 bytes kept.
    package static let maxBytes = 300

    /// `error` with control characters made spaces, cut to ``maxBytes`` (ending with "…" when cut).
    package static func shortened(_ error: String) -> String {
        let clean = String(String.UnicodeScalarView(error.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
        guard clean.utf8.count > maxBytes else { return clean }
        let marker = "…"
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in clean.unicodeScalars {
            bytes += UTF8.width(scalar)
            guard bytes <= maxBytes - marker.utf8.count else { break }
            kept.append(scalar)
        }
        return String(kept) + marker
    }
}
