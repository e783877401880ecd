import BrokerStorage
import Foundation
import Logging
import PostgresNIO

/// The event outbox in PostgreSQL (tables of the migration `v4-events` in ``PostgresSchema``), shared by every node
/// of a cluster.
///
/// Appends take an advisory lock until they commit, so that rows commit in the order of their `seq`: a donation's
/// event appended later can never be claimed before one appended earlier that had not committed yet. A claim locks
/// the rows it takes (`FOR UPDATE SKIP LOCKED`) and sets their lease in the same statement, so two nodes claiming at
/// once never get the same row; a row another node leased in between is checked again once it is locked, and skipped.
package struct PostgresEventOutbox: EventOutbox {
    let client: PostgresClient
    let logger: Logger
    /// How long one call may take before the caller is told the store is unavailable.
    var timeout: Duration = .seconds(5)

    /// The key of the advisory lock every append holds until it commits ("lb" + "evt").
    static let appendLockKey: Int64 = 0x6C62_6576_74
    /// The first key of the advisory locks that make a donation's subscription count and insert one step ("lb" + "ps");
    /// the second is a hash of the donation.
    static let subscriptionLockKey: Int32 = 0x6C62_7073

    package init(client: PostgresClient, logger: Logger = Logger(label: "location-broker.outbox")) {
        self.client = client
        self.logger = logger
    }

    package func append(_ events: [OutboxEvent]) async throws {
        guard !events.isEmpty else { return }
        try await guarded {
            try await client.withTransaction(logger: logger) { connection in
                try await Self.insert(events, on: connection, logger: logger)
            }
        }
    }

    /// Inserts `events` in the caller's transaction, which then holds the append lock until it ends; ids already
    /// stored are left as they are.
    static func insert(_ events: [OutboxEvent], on connection: PostgresConnection, logger: Logger) async throws {
        guard !events.isEmpty else { return }
        try await connection.query("SELECT pg_advisory_xact_lock(\(appendLockKey))", logger: logger)
        for event in events {
            if let needsSilent = event.silenceEdgeNeedsSilentBefore {
                // Under the append lock: two nodes judging the same silence take turns here.
                var latest: String?
                let rows = try await connection.query(
                    """
                    SELECT type FROM lb_outbox_events WHERE donation = \(event.donation) AND incarnation = \(event.incarnation)
                        AND type IN (\(OutboxEvent.silent), \(OutboxEvent.back))
                    ORDER BY seq DESC LIMIT 1
                    """, logger: logger)
                for try await type in rows.decode(String.self) { latest = type }
                guard (latest == OutboxEvent.silent) == needsSilent else { continue }
            }
            let push = try OutboxColumns.encode(event.push)
            let pushState = event.push == nil ? "none" : "pending"
            let webhookState = event.webhook ? "pending" : "none"
            try await connection.query(
                """
                INSERT INTO lb_outbox_events (id, donation, incarnation, type, occurred_at, body, push, webhook_state, push_state)
                VALUES (\(event.id), \(event.donation), \(event.incarnation), \(event.type), \(event.occurredAt), \(event.body), \(push),
                    \(webhookState), \(pushState))
                ON CONFLICT (id) DO NOTHING
                """, logger: logger)
        }
    }

    package func claim(_ route: OutboxRoute, node: String, now: Int64, lease: Int64, limit: Int) async throws -> [ClaimedEvent] {
        guard limit > 0 else { return [] }
        let c = OutboxColumns(route)
        return try await guarded {
            // A donation's head is its oldest row pending on the route: its later rows wait for it. A head another
            // claim is taking is skipped, and its later rows are not heads while it is pending.
            let rows = try await client.query(
                """
                WITH heads AS (
                    SELECT seq FROM lb_outbox_events AS head
                    WHERE head.\(unescaped: c.state) = 'pending'
                        AND head.\(unescaped: c.nextAttemptAt) <= \(now)
                        AND (head.\(unescaped: c.claimedUntil) IS NULL OR head.\(unescaped: c.claimedUntil) <= \(now))
                        AND NOT EXISTS (
                            SELECT 1 FROM lb_outbox_events AS earlier
                            WHERE earlier.donation = head.donation AND earlier.\(unescaped: c.state) = 'pending' AND earlier.seq < head.seq)
                    ORDER BY head.seq
                    LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED
                )
                UPDATE lb_outbox_events AS claimed SET \(unescaped: c.claimedBy) = \(node), \(unescaped: c.claimedUntil) = \(now + lease)
                FROM heads WHERE claimed.seq = heads.seq
                RETURNING claimed.seq, claimed.id, claimed.donation, claimed.incarnation, claimed.type, claimed.occurred_at, claimed.body,
                    claimed.push, claimed.\(unescaped: c.attempts)
                """, logger: logger)
            var claimed: [(seq: Int64, event: ClaimedEvent)] = []
            for try await (seq, id, donation, incarnation, type, occurredAt, body, push, attempts) in rows.decode(
                (Int64, String, String, String, String, Int64, String, String?, Int32).self)
            {
                let event = OutboxEvent(
                    id: id, donation: donation, incarnation: incarnation, type: type, occurredAt: occurredAt, body: body,
                    push: try OutboxColumns.decode(push))
                claimed.append((seq, ClaimedEvent(event: event, attempts: Int(attempts))))
            }
            // RETURNING keeps no order.
            return claimed.sorted { $0.seq < $1.seq }.map(\.event)
        }
    }

    package func delivered(_ id: String, route: OutboxRoute, node: String, at: Int64) async throws {
        let c = OutboxColumns(route)
        try await execute(
                """
                UPDATE lb_outbox_events SET \(unescaped: c.state) = 'delivered', \(unescaped: c.deliveredAt) = \(at),
                    \(unescaped: c.claimedBy) = NULL, \(unescaped: c.claimedUntil) = NULL
                WHERE id = \(id) AND \(unescaped: c.state) = 'pending'
                """)
    }

    package func retry(_ id: String, route: OutboxRoute, node: String, attempts: Int, nextAttemptAt: Int64, error: String) async throws {
        let c = OutboxColumns(route)
        let error = OutboxErrorText.shortened(error)
        try await execute(
                """
                UPDATE lb_outbox_events SET \(unescaped: c.attempts) = \(Int32(clamping: attempts)), \(unescaped: c.nextAttemptAt) = \(nextAttemptAt),
                    \(unescaped: c.lastError) = \(error), \(unescaped: c.claimedBy) = NULL, \(unescaped: c.claimedUntil) = NULL
                WHERE id = \(id) AND \(unescaped: c.state) = 'pending' AND \(unescaped: c.claimedBy) = \(node)
                """)
    }

    package func failed(_ id: String, route: OutboxRoute, node: String, attempts: Int, error: String) async throws {
        let c = OutboxColumns(route)
        let error = OutboxErrorText.shortened(error)
        try await execute(
                """
                UPDATE lb_outbox_events SET \(unescaped: c.state) = 'failed', \(unescaped: c.attempts) = \(Int32(clamping: attempts)),
                    \(unescaped: c.lastError) = \(error), \(unescaped: c.claimedBy) = NULL, \(unescaped: c.claimedUntil) = NULL
                WHERE id = \(id) AND \(unescaped: c.state) = 'pending' AND \(unescaped: c.claimedBy) = \(node)
                """)
    }

    package func failedEvents(route: OutboxRoute, limit: Int) async throws -> [FailedEvent] {
        let c = OutboxColumns(route)
        return try await guarded {
            let rows = try await client.query(
                """
                SELECT id, donation, type, occurred_at, \(unescaped: c.attempts), \(unescaped: c.lastError)
                FROM lb_outbox_events WHERE \(unescaped: c.state) = 'failed' ORDER BY seq LIMIT \(max(limit, 0))
                """, logger: logger)
            var failed: [FailedEvent] = []
            for try await (id, donation, type, occurredAt, attempts, lastError) in rows.decode((String, String, String, Int64, Int32, String?).self) {
                failed.append(FailedEvent(id: id, donation: donation, type: type, occurredAt: occurredAt, attempts: Int(attempts), lastError: lastError))
            }
            return failed
        }
    }

    package func requeue(route: OutboxRoute, id: String?, now: Int64) async throws -> Int {
        let c = OutboxColumns(route)
        return try await guarded {
            let rows = try await client.query(
                """
                WITH requeued AS (
                    UPDATE lb_outbox_events SET \(unescaped: c.state) = 'pending', \(unescaped: c.attempts) = 0, \(unescaped: c.nextAttemptAt) = \(now),
                        \(unescaped: c.claimedBy) = NULL, \(unescaped: c.claimedUntil) = NULL
                    WHERE \(unescaped: c.state) = 'failed' AND (\(id)::text IS NULL OR id = \(id))
                    RETURNING 1
                )
                SELECT count(*) FROM requeued
                """, logger: logger)
            return try await Self.count(rows)
        }
    }

    package func stats(route: OutboxRoute, now: Int64) async throws -> OutboxStats {
        let c = OutboxColumns(route)
        return try await guarded {
            let rows = try await client.query(
                """
                SELECT count(*) FILTER (WHERE \(unescaped: c.state) = 'pending'),
                    count(*) FILTER (WHERE \(unescaped: c.state) = 'pending' AND \(unescaped: c.attempts) > 0),
                    count(*) FILTER (WHERE \(unescaped: c.state) = 'failed'),
                    min(occurred_at) FILTER (WHERE \(unescaped: c.state) = 'pending')
                FROM lb_outbox_events
                """, logger: logger)
            var stats = OutboxStats(pending: 0, retrying: 0, failed: 0, oldestPendingAge: 0)
            for try await (pending, retrying, failed, oldest) in rows.decode((Int64, Int64, Int64, Int64?).self) {
                stats = OutboxStats(
                    pending: Int(pending), retrying: Int(retrying), failed: Int(failed), oldestPendingAge: oldest.map { max(now - $0, 0) } ?? 0)
            }
            return stats
        }
    }

    package func prune(deliveredBefore before: Int64) async throws -> Int {
        try await guarded {
            let rows = try await client.query(
                """
                WITH pruned AS (
                    DELETE FROM lb_outbox_events
                    WHERE webhook_state IN ('delivered', 'none') AND push_state IN ('delivered', 'none')
                        AND greatest(occurred_at, coalesce(webhook_delivered_at, 0), coalesce(push_delivered_at, 0)) < \(before)
                    RETURNING 1
                )
                SELECT count(*) FROM pruned
                """, logger: logger)
            return try await Self.count(rows)
        }
    }

    package func addSubscription(_ subscription: PushSubscriptionRecord, limit: Int) async throws -> Bool {
        try await guarded {
            try await client.withTransaction(logger: logger) { connection in
                // Nodes adding to one donation at once count one after the other, so the limit holds.
                try await connection.query(
                    "SELECT pg_advisory_xact_lock(\(Self.subscriptionLockKey), hashtext(\(subscription.donation)))", logger: logger)
                // Subscriptions of an earlier incarnation can never be pushed to again.
                try await connection.query(
                    "DELETE FROM lb_push_subscriptions WHERE donation = \(subscription.donation) AND incarnation <> \(subscription.incarnation)",
                    logger: logger)
                let others = try await Self.count(
                    try await connection.query(
                        "SELECT count(*) FROM lb_push_subscriptions WHERE donation = \(subscription.donation) AND endpoint <> \(subscription.endpoint)",
                        logger: logger))
                guard others < limit else { return false }
                try await connection.query(
                    """
                    INSERT INTO lb_push_subscriptions (endpoint, donation, incarnation, p256dh, auth, created_at)
                    VALUES (\(subscription.endpoint), \(subscription.donation), \(subscription.incarnation), \(subscription.p256dh),
                        \(subscription.auth), \(subscription.createdAt))
                    ON CONFLICT (donation, endpoint) DO UPDATE SET incarnation = EXCLUDED.incarnation, p256dh = EXCLUDED.p256dh,
                        auth = EXCLUDED.auth, created_at = EXCLUDED.created_at
                    """, logger: logger)
                return true
            }
        }
    }

    package func subscriptions(donation: String, incarnation: String) async throws -> [PushSubscriptionRecord] {
        try await guarded {
            let rows = try await client.query(
                """
                SELECT endpoint, p256dh, auth, created_at FROM lb_push_subscriptions
                WHERE donation = \(donation) AND incarnation = \(incarnation) ORDER BY created_at, endpoint
                """, logger: logger)
            var subscriptions: [PushSubscriptionRecord] = []
            for try await (endpoint, p256dh, auth, createdAt) in rows.decode((String, String, String, Int64).self) {
                subscriptions.append(
                    PushSubscriptionRecord(donation: donation, incarnation: incarnation, endpoint: endpoint, p256dh: p256dh, auth: auth, createdAt: createdAt))
            }
            return subscriptions
        }
    }

    package func removeSubscription(endpoint: String) async throws {
        try await execute("DELETE FROM lb_push_subscriptions WHERE endpoint = \(endpoint)")
    }

    package func removeSubscription(endpoint: String, donation: String) async throws {
        try await execute("DELETE FROM lb_push_subscriptions WHERE endpoint = \(endpoint) AND donation = \(donation)")
    }

    package func removeSubscriptions(donation: String) async throws {
        try await execute("DELETE FROM lb_push_subscriptions WHERE donation = \(donation)")
    }

    private static func count(_ rows: PostgresRowSequence) async throws -> Int {
        var count = 0
        for try await value in rows.decode(Int64.self) { count = Int(value) }
        return count
    }

    /// Runs a statement that returns no rows, to its end (so that its error, if any, is thrown here).
    private func execute(_ query: PostgresQuery) async throws {
        try await guarded {
            for try await _ in try await client.query(query, logger: logger) {}
        }
    }

    private func guarded<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await PostgresDonationStore.guarded(timeout: timeout, body)
    }
}
