import BrokerStorage
import Foundation
import GRDB

/// The event outbox in the broker's SQLite file (tables of the migration `v4-events`), on the queue the donation
/// store uses (see ``SQLiteDatabase``). Every write is one transaction, durable on return (WAL, `synchronous=FULL`).
package struct SQLiteEventOutbox: EventOutbox {
    private let database: DatabaseQueue

    init(database: DatabaseQueue) {
        self.database = database
    }

    package func append(_ events: [OutboxEvent]) async throws {
        guard !events.isEmpty else { return }
        try await database.write { db in try Self.insert(events, in: db) }
    }

    /// Inserts `events` in the caller's transaction; ids already stored are left as they are, and a silence edge
    /// out of turn (``OutboxEvent/silenceEdgeNeedsSilentBefore``) is not stored.
    static func insert(_ events: [OutboxEvent], in db: Database) throws {
        for event in events {
            if let needsSilent = event.silenceEdgeNeedsSilentBefore {
                let latest = try String.fetchOne(
                    db,
                    sql: """
                        SELECT type FROM outbox_event WHERE donation = ? AND incarnation = ? AND type IN (?, ?)
                        ORDER BY seq DESC LIMIT 1
                        """,
                    arguments: [event.donation, event.incarnation, OutboxEvent.silent, OutboxEvent.back])
                guard (latest == OutboxEvent.silent) == needsSilent else { continue }
            }
            try db.execute(
                sql: """
                    INSERT INTO outbox_event (id, donation, incarnation, type, occurred_at, body, push, webhook_state, push_state)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO NOTHING
                    """,
                arguments: [
                    event.id, event.donation, event.incarnation, event.type, event.occurredAt, event.body,
                    try OutboxColumns.encode(event.push), event.webhook ? "pending" : "none", event.push == nil ? "none" : "pending",
                ])
        }
    }

    package func claim(_ route: OutboxRoute, node: String, now: Int64, lease: Int64, limit: Int) async throws -> [ClaimedEvent] {
        guard limit > 0 else { return [] }
        let c = OutboxColumns(route)
        return try await database.write { db in
            // A donation's head is its oldest row pending on the route: its later rows wait for it.
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM outbox_event AS head
                    WHERE head.\(c.state) = 'pending'
                        AND head.seq = (SELECT min(seq) FROM outbox_event WHERE donation = head.donation AND \(c.state) = 'pending')
                        AND head.\(c.nextAttemptAt) <= ?
                        AND (head.\(c.claimedUntil) IS NULL OR head.\(c.claimedUntil) <= ?)
                    ORDER BY head.seq
                    LIMIT ?
                    """,
                arguments: [now, now, limit])
            var claimed: [ClaimedEvent] = []
            for row in rows {
                try db.execute(
                    sql: "UPDATE outbox_event SET \(c.claimedBy) = ?, \(c.claimedUntil) = ? WHERE seq = ?",
                    arguments: [node, now + lease, row["seq"] as Int64])
                claimed.append(ClaimedEvent(event: try Self.event(from: row), attempts: row[c.attempts]))
            }
            return claimed
        }
    }

    package func delivered(_ id: String, route: OutboxRoute, node: String, at: Int64) async throws {
        let c = OutboxColumns(route)
        try await database.write { db in
            try db.execute(
                sql: """
                    UPDATE outbox_event SET \(c.state) = 'delivered', \(c.deliveredAt) = ?, \(c.claimedBy) = NULL, \(c.claimedUntil) = NULL
                    WHERE id = ? AND \(c.state) = 'pending'
                    """,
                arguments: [at, id])
        }
    }

    package func retry(_ id: String, route: OutboxRoute, node: String, attempts: Int, nextAttemptAt: Int64, error: String) async throws {
        let c = OutboxColumns(route)
        try await database.write { db in
            try db.execute(
                sql: """
                    UPDATE outbox_event SET \(c.attempts) = ?, \(c.nextAttemptAt) = ?, \(c.lastError) = ?,
                        \(c.claimedBy) = NULL, \(c.claimedUntil) = NULL
                    WHERE id = ? AND \(c.state) = 'pending' AND \(c.claimedBy) = ?
                    """,
                arguments: [attempts, nextAttemptAt, OutboxErrorText.shortened(error), id, node])
        }
    }

    package func failed(_ id: String, route: OutboxRoute, node: String, attempts: Int, error: String) async throws {
        let c = OutboxColumns(route)
        try await database.write { db in
            try db.execute(
                sql: """
                    UPDATE outbox_event SET \(c.state) = 'failed', \(c.attempts) = ?, \(c.lastError) = ?,
                        \(c.claimedBy) = NULL, \(c.claimedUntil) = NULL
                    WHERE id = ? AND \(c.state) = 'pending' AND \(c.claimedBy) = ?
                    """,
                arguments: [attempts, OutboxErrorText.shortened(error), id, node])
        }
    }

    package func failedEvents(route: OutboxRoute, limit: Int) async throws -> [FailedEvent] {
        let c = OutboxColumns(route)
        return try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, donation, type, occurred_at, \(c.attempts) AS attempts, \(c.lastError) AS last_error
                    FROM outbox_event WHERE \(c.state) = 'failed' ORDER BY seq LIMIT ?
                    """,
                arguments: [max(limit, 0)]
            ).map { row in
                FailedEvent(
                    id: row["id"], donation: row["donation"], type: row["type"], occurredAt: row["occurred_at"], attempts: row["attempts"],
                    lastError: row["last_error"])
            }
        }
    }

    package func requeue(route: OutboxRoute, id: String?, now: Int64) async throws -> Int {
        let c = OutboxColumns(route)
        return try await database.write { db in
            try db.execute(
                sql: """
                    UPDATE outbox_event SET \(c.state) = 'pending', \(c.attempts) = 0, \(c.nextAttemptAt) = ?,
                        \(c.claimedBy) = NULL, \(c.claimedUntil) = NULL
                    WHERE \(c.state) = 'failed' AND (? IS NULL OR id = ?)
                    """,
                arguments: [now, id, id])
            return db.changesCount
        }
    }

    package func stats(route: OutboxRoute, now: Int64) async throws -> OutboxStats {
        let c = OutboxColumns(route)
        return try await database.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT count(*) FILTER (WHERE \(c.state) = 'pending') AS pending,
                        count(*) FILTER (WHERE \(c.state) = 'pending' AND \(c.attempts) > 0) AS retrying,
                        count(*) FILTER (WHERE \(c.state) = 'failed') AS failed,
                        min(occurred_at) FILTER (WHERE \(c.state) = 'pending') AS oldest
                    FROM outbox_event
                    """)
            let oldest: Int64? = row?["oldest"]
            return OutboxStats(
                pending: row?["pending"] ?? 0, retrying: row?["retrying"] ?? 0, failed: row?["failed"] ?? 0,
                oldestPendingAge: oldest.map { max(now - $0, 0) } ?? 0)
        }
    }

    package func prune(deliveredBefore before: Int64) async throws -> Int {
        try await database.write { db in
            try db.execute(
                sql: """
                    DELETE FROM outbox_event
                    WHERE webhook_state IN ('delivered', 'none') AND push_state IN ('delivered', 'none')
                        AND max(occurred_at, coalesce(webhook_delivered_at, 0), coalesce(push_delivered_at, 0)) < ?
                    """,
                arguments: [before])
            return db.changesCount
        }
    }

    package func addSubscription(_ subscription: PushSubscriptionRecord, limit: Int) async throws -> Bool {
        try await database.write { db in
            // Subscriptions of an earlier incarnation can never be pushed to again.
            try db.execute(
                sql: "DELETE FROM push_subscription WHERE donation = ? AND incarnation <> ?",
                arguments: [subscription.donation, subscription.incarnation])
            let others =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM push_subscription WHERE donation = ? AND endpoint <> ?",
                    arguments: [subscription.donation, subscription.endpoint]) ?? 0
            guard others < limit else { return false }
            try db.execute(
                sql: """
                    INSERT INTO push_subscription (endpoint, donation, incarnation, p256dh, auth, created_at) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (donation, endpoint) DO UPDATE SET incarnation = excluded.incarnation, p256dh = excluded.p256dh,
                        auth = excluded.auth, created_at = excluded.created_at
                    """,
                arguments: [
                    subscription.endpoint, subscription.donation, subscription.incarnation, subscription.p256dh, subscription.auth,
                    subscription.createdAt,
                ])
            return true
        }
    }

    package func subscriptions(donation: String, incarnation: String) async throws -> [PushSubscriptionRecord] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM push_subscription WHERE donation = ? AND incarnation = ? ORDER BY created_at, endpoint",
                arguments: [donation, incarnation]
            ).map { row in
                PushSubscriptionRecord(
                    donation: row["donation"], incarnation: row["incarnation"], endpoint: row["endpoint"], p256dh: row["p256dh"],
                    auth: row["auth"], createdAt: row["created_at"])
            }
        }
    }

    package func removeSubscription(endpoint: String) async throws {
        try await database.write { db in try db.execute(sql: "DELETE FROM push_subscription WHERE endpoint = ?", arguments: [endpoint]) }
    }

    package func removeSubscription(endpoint: String, donation: String) async throws {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM push_subscription WHERE endpoint = ? AND donation = ?", arguments: [endpoint, donation])
        }
    }

    package func removeSubscriptions(donation: String) async throws {
        try await database.write { db in try db.execute(sql: "DELETE FROM push_subscription WHERE donation = ?", arguments: [donation]) }
    }

    private static func event(from row: Row) throws -> OutboxEvent {
        OutboxEvent(
            id: row["id"], donation: row["donation"], incarnation: row["incarnation"], type: row["type"], occurredAt: row["occurred_at"],
            body: row["body"], push: try OutboxColumns.decode(row["push"]))
    }
}
