import BrokerCore
import BrokerProtocol
import BrokerStorage
import Foundation
import Logging
import PostgresNIO

/// The cluster's tables in PostgreSQL, brought up to date by versioned migrations.
///
/// Nodes starting together take a session advisory lock, so one of them migrates and the others wait and
/// find the work done. A released migration is never edited, only followed by a new one.
enum PostgresSchema {
    /// The key of the advisory lock held while migrating ("lb" + "mig").
    static let migrationLockKey: Int64 = 0x6C62_6D69_67

    /// Migrations in order: a version name and its statements.
    static let migrations: [(version: String, statements: [String])] = [
        (
            "v1-donations",
            [
                "CREATE SEQUENCE lb_revision",
                """
                CREATE TABLE lb_donations (
                    id text PRIMARY KEY,
                    body text,
                    active boolean NOT NULL,
                    revision bigint NOT NULL
                )
                """,
                "CREATE INDEX lb_donations_active ON lb_donations (id) WHERE active",
                "CREATE INDEX lb_donations_revision ON lb_donations (revision)",
            ]
        ),
        (
            "v2-last-positions",
            [
                // The newest kept position of each channel, so a node started later knows it too. `donations` is
                // the comma-separated ids it may be shown to; the row goes when any of them stops being trackable.
                // UNLOGGED: positions stay out of the write-ahead log (and so out of backups and replicas), and
                // a crash of PostgreSQL empties the table rather than bringing positions back.
                """
                CREATE UNLOGGED TABLE lb_last_positions (
                    channel text PRIMARY KEY,
                    seq bigint NOT NULL,
                    position text NOT NULL,
                    donations text NOT NULL,
                    seen_at bigint NOT NULL
                )
                """
            ]
        ),
        (
            "v3-sealed-last-positions",
            [
                // Sealed with the cluster secret and keyed by a keyed hash of the channel: the table holds no
                // identity, donation id or coordinate in clear. `seq` stays in clear for the upsert's ordering and
                // `kept_at` for the sweep. The old rows held positions in clear: they go.
                "DROP TABLE lb_last_positions",
                """
                CREATE UNLOGGED TABLE lb_last_positions (
                    channel_key text PRIMARY KEY,
                    seq bigint NOT NULL,
                    sealed text NOT NULL,
                    kept_at timestamptz NOT NULL DEFAULT now()
                )
                """,
            ]
        ),
        (
            "v4-events",
            [
                // The event outbox (see PostgresEventOutbox; not to be confused with the NOTIFY channel `lb_events`):
                // `seq` keeps the order events were appended in, and each route keeps its own delivery state. Bodies
                // hold no coordinate, so they are stored as they are.
                """
                CREATE TABLE lb_outbox_events (
                    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    id text NOT NULL UNIQUE,
                    donation text NOT NULL,
                    incarnation text NOT NULL,
                    type text NOT NULL,
                    occurred_at bigint NOT NULL,
                    body text NOT NULL,
                    push text,
                    webhook_state text NOT NULL CHECK (webhook_state IN ('pending', 'delivered', 'failed', 'none')),
                    webhook_attempts integer NOT NULL DEFAULT 0,
                    webhook_next_attempt_at bigint NOT NULL DEFAULT 0,
                    webhook_last_error text,
                    webhook_claimed_by text,
                    webhook_claimed_until bigint,
                    webhook_delivered_at bigint,
                    push_state text NOT NULL CHECK (push_state IN ('pending', 'delivered', 'failed', 'none')),
                    push_attempts integer NOT NULL DEFAULT 0,
                    push_next_attempt_at bigint NOT NULL DEFAULT 0,
                    push_last_error text,
                    push_claimed_by text,
                    push_claimed_until bigint,
                    push_delivered_at bigint
                )
                """,
                // A donation's oldest pending row on a route is the one claimed: found through these.
                "CREATE INDEX lb_outbox_events_webhook_pending ON lb_outbox_events (donation, seq) WHERE webhook_state = 'pending'",
                "CREATE INDEX lb_outbox_events_push_pending ON lb_outbox_events (donation, seq) WHERE push_state = 'pending'",
                // One row per browser and donation: a browser has one endpoint for the whole tracking page, and may
                // watch two donations.
                """
                CREATE TABLE lb_push_subscriptions (
                    endpoint text NOT NULL,
                    donation text NOT NULL,
                    incarnation text NOT NULL,
                    p256dh text NOT NULL,
                    auth text NOT NULL,
                    created_at bigint NOT NULL,
                    PRIMARY KEY (donation, endpoint)
                )
                """,
                "CREATE INDEX lb_push_subscriptions_by_endpoint ON lb_push_subscriptions (endpoint)",
            ]
        ),
        (
            "v5-keep-positions",
            [
                // A writer batch in one round trip (see PostgresBus.send): the change lock taken shared, the
                // channels' newest positions kept while one of their donations is trackable, then the NOTIFYs in
                // order, all in the calling statement's transaction. VOLATILE, so each statement takes its
                // snapshot when it starts: the upsert's check sees every change that committed before the lock
                // was granted, as it would in a transaction of separate statements.
                """
                CREATE FUNCTION lb_keep_positions(
                    lock_key bigint, channel_keys text[], seqs int8[], sealed text[], donations text[], channels text[],
                    targets text[], payloads text[]
                ) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
                BEGIN
                    IF cardinality(channel_keys) > 0 THEN
                        PERFORM pg_advisory_xact_lock_shared(lock_key);
                        INSERT INTO lb_last_positions (channel_key, seq, sealed, kept_at)
                        SELECT p.channel_key, p.seq, p.sealed, now()
                        FROM unnest(channel_keys, seqs, sealed, donations, channels) AS p(channel_key, seq, sealed, donations, channel)
                        WHERE (
                            SELECT bool_or(named.body->>'volunteer' = p.channel AND named.body->>'state' IN ('BEING-LOOKED-FOR', 'BEING-TAKEN-TO'))
                            FROM (SELECT d.body::jsonb AS body FROM lb_donations d WHERE d.id = ANY(string_to_array(p.donations, ','))) AS named)
                        ON CONFLICT (channel_key) DO UPDATE SET seq = EXCLUDED.seq, sealed = EXCLUDED.sealed, kept_at = EXCLUDED.kept_at
                        WHERE lb_last_positions.seq < EXCLUDED.seq;
                    END IF;
                    PERFORM pg_notify(t.target, t.payload) FROM unnest(targets, payloads) WITH ORDINALITY AS t(target, payload, n) ORDER BY n;
                END
                $$
                """,
            ]
        ),
        (
            "v6-release",
            // The release that last migrated the store, which an older one names when it refuses it (SchemaRelease).
            ["CREATE TABLE lb_release (version text NOT NULL)"]
        ),
    ]

    /// What a node reads at start.
    struct Prepared: Sendable {
        let snapshot: StoreSnapshot
        /// The stored last positions that opened and are younger than ``SealedLastPosition/retentionSeconds``.
        let lastPositions: [LastPosition]
        /// Stored rows that did not open with the cluster secrets (dropped, counted).
        let rejected: Int
    }

    /// Runs the pending migrations, then reads the active donations and the channels' last positions, on one
    /// connection of its own (the pool is not running yet when the broker starts).
    static func prepare(_ location: PostgresLocation, keys: ClusterKeys, logger: Logger) async throws -> Prepared {
        let connection = try await PostgresConnection.connect(configuration: try location.connectionConfiguration(), id: 0, logger: logger)
        do {
            try await migrate(on: connection, logger: logger)
            let snapshot = try await connection.withTransaction(logger: logger) { connection in
                try await PostgresDonationStore.snapshot(on: connection, logger: logger)
            }
            var lastPositions: [LastPosition] = []
            var rejected = 0
            let oldest = Int64((Date().timeIntervalSince1970 - Double(SealedLastPosition.retentionSeconds)) * 1000)
            let rows = try await connection.query("SELECT channel_key, sealed FROM lb_last_positions", logger: logger)
            for try await (channelKey, sealed) in rows.decode((String, String).self) {
                guard let last = try? SealedLastPosition.open(channelKey: channelKey, sealed: sealed, keys: keys) else {
                    rejected += 1
                    continue
                }
                // The time inside the seal, not the row's: an old sealed row put back is still old.
                if last.seenAt >= oldest { lastPositions.append(last) }
            }
            try await connection.close()
            // During a rotation a channel may have a row under each secret's key: the newest counts.
            lastPositions.sort { $0.seq > $1.seq }
            return Prepared(snapshot: snapshot, lastPositions: lastPositions, rejected: rejected)
        } catch {
            try? await connection.close()
            throw error
        }
    }

    private static func migrate(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT pg_advisory_lock(\(migrationLockKey))", logger: logger)
        do {
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS lb_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
                logger: logger)
            var applied = Set<String>()
            for try await version in try await connection.query("SELECT version FROM lb_migrations", logger: logger).decode(String.self) {
                applied.insert(version)
            }
            // A store a newer release migrated is refused before anything is written to it.
            var writtenBy: String?
            if applied.contains("v6-release") {
                for try await version in try await connection.query("SELECT version FROM lb_release", logger: logger).decode(String.self) {
                    writtenBy = version
                }
            }
            if let refusal = SchemaRelease.refusal(
                store: "PostgreSQL store", applied: applied, known: migrations.map { $0.version }, writtenBy: writtenBy)
            {
                throw refusal
            }
            for migration in migrations where !applied.contains(migration.version) {
                try await connection.withTransaction(logger: logger) { connection in
                    for statement in migration.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query("INSERT INTO lb_migrations (version) VALUES (\(migration.version))", logger: logger)
                }
                logger.info("migrated the PostgreSQL store", metadata: ["version": "\(migration.version)"])
            }
            try await connection.withTransaction(logger: logger) { connection in
                try await connection.query("DELETE FROM lb_release", logger: logger)
                try await connection.query("INSERT INTO lb_release (version) VALUES (\(BrokerRelease.version))", logger: logger)
            }
            try await connection.query("SELECT pg_advisory_unlock(\(migrationLockKey))", logger: logger)
        } catch {
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(migrationLockKey))", logger: logger)
            throw error
        }
    }
}
