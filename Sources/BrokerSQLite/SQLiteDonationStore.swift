import BrokerCore
import BrokerProtocol
import BrokerStorage
import Foundation
import GRDB

/// Donations in the broker's SQLite file (see ``SQLiteDatabase``).
package struct SQLiteDonationStore: DonationStore {
    private let database: DatabaseQueue

    /// The store on a database ``SQLiteDatabase/open(path:)`` opened (and migrated).
    init(database: DatabaseQueue) {
        self.database = database
    }

    /// Opens the database at `path` as ``SQLiteDatabase/open(path:)`` does, for this store alone.
    init(path: String) throws {
        self.init(database: try SQLiteDatabase.open(path: path))
    }

    /// Versioned schema changes; a released migration is never edited, only followed by a new one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-donations") { db in
            try db.create(table: "donation") { table in
                table.primaryKey("id", .text)
                table.column("donor", .text).notNull()
                table.column("volunteer", .text)
                table.column("state", .text).notNull()
                table.column("home_lat", .double).notNull()
                table.column("home_lon", .double).notNull()
                table.column("home_label", .text)
                table.column("institution_lat", .double)
                table.column("institution_lon", .double)
                table.column("institution_name", .text)
                table.column("created_at", .integer).notNull()
                table.column("updated_at", .integer).notNull()
            }
            try db.create(index: "donation_active_by_state", on: "donation", columns: ["state"])
        }
        migrator.registerMigration("v2-revisions") { db in
            // One counter for the whole store: every change takes the next value (see DonationStore).
            try db.create(table: "store_revision") { table in
                table.column("value", .integer).notNull()
            }
            try db.execute(sql: "INSERT INTO store_revision (value) VALUES (0)")
        }
        migrator.registerMigration("v3-incarnations") { db in
            // Watch links bind to a donation's incarnation (see Donation.incarnation); donations stored before
            // get one now, 16 random bytes like the ones DonationService makes.
            try db.alter(table: "donation") { table in table.add(column: "incarnation", .text) }
            try db.execute(sql: "UPDATE donation SET incarnation = lower(hex(randomblob(16)))")
        }
        migrator.registerMigration("v4-events") { db in
            // The event outbox (see SQLiteEventOutbox): `seq` keeps the order events were appended in, and each
            // route keeps its own delivery state. Bodies hold no coordinate, so they are stored as they are.
            try db.execute(
                sql: """
                    CREATE TABLE outbox_event (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        id TEXT NOT NULL UNIQUE,
                        donation TEXT NOT NULL,
                        incarnation TEXT NOT NULL,
                        type TEXT NOT NULL,
                        occurred_at INTEGER NOT NULL,
                        body TEXT NOT NULL,
                        push TEXT,
                        webhook_state TEXT NOT NULL CHECK (webhook_state IN ('pending', 'delivered', 'failed', 'none')),
                        webhook_attempts INTEGER NOT NULL DEFAULT 0,
                        webhook_next_attempt_at INTEGER NOT NULL DEFAULT 0,
                        webhook_last_error TEXT,
                        webhook_claimed_by TEXT,
                        webhook_claimed_until INTEGER,
                        webhook_delivered_at INTEGER,
                        push_state TEXT NOT NULL CHECK (push_state IN ('pending', 'delivered', 'failed', 'none')),
                        push_attempts INTEGER NOT NULL DEFAULT 0,
                        push_next_attempt_at INTEGER NOT NULL DEFAULT 0,
                        push_last_error TEXT,
                        push_claimed_by TEXT,
                        push_claimed_until INTEGER,
                        push_delivered_at INTEGER
                    )
                    """)
            // A donation's oldest pending row on a route is the one claimed: found through these.
            try db.execute(sql: "CREATE INDEX outbox_event_webhook_pending ON outbox_event (donation, seq) WHERE webhook_state = 'pending'")
            try db.execute(sql: "CREATE INDEX outbox_event_push_pending ON outbox_event (donation, seq) WHERE push_state = 'pending'")
            // One row per browser and donation: a browser has one endpoint for the whole tracking page, and may
            // watch two donations.
            try db.execute(
                sql: """
                    CREATE TABLE push_subscription (
                        endpoint TEXT NOT NULL,
                        donation TEXT NOT NULL,
                        incarnation TEXT NOT NULL,
                        p256dh TEXT NOT NULL,
                        auth TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (donation, endpoint)
                    )
                    """)
            try db.execute(sql: "CREATE INDEX push_subscription_by_endpoint ON push_subscription (endpoint)")
        }
        migrator.registerMigration("v5-release") { db in
            // The release that last opened the database, which an older one names when it refuses it (SchemaRelease).
            try db.execute(sql: "CREATE TABLE broker_release (version TEXT NOT NULL)")
        }
        return migrator
    }

    package func donation(id: String) async throws -> Donation? {
        try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM donation WHERE id = ?", arguments: [id]).map(Self.donation(from:))
        }
    }

    package func change(
        id: String, _ decide: @escaping @Sendable (Donation?) throws -> DonationDecision,
        events: @escaping @Sendable (DonationChange) throws -> [OutboxEvent]
    ) async throws -> DonationChange? {
        try await database.write { db -> DonationChange? in
            let old = try Row.fetchOne(db, sql: "SELECT * FROM donation WHERE id = ?", arguments: [id]).map(Self.donation(from:))
            let decision = try decide(old)
            let new: Donation?
            switch decision {
            case .keep:
                return nil
            case .delete:
                guard old != nil else { return nil }
                try db.execute(sql: "DELETE FROM donation WHERE id = ?", arguments: [id])
                new = nil
            case .save(let donation):
                try Self.upsert(donation, in: db)
                new = donation
            }
            let revision = try Int64.fetchOne(db, sql: "UPDATE store_revision SET value = value + 1 RETURNING value") ?? 0
            let change = DonationChange(id: id, revision: revision, old: old, new: new)
            try SQLiteEventOutbox.insert(try events(change), in: db)
            return change
        }
    }

    private static func upsert(_ donation: Donation, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO donation (id, donor, volunteer, state, home_lat, home_lon, home_label,
                    institution_lat, institution_lon, institution_name, created_at, updated_at, incarnation)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET donor = excluded.donor, volunteer = excluded.volunteer,
                    state = excluded.state, home_lat = excluded.home_lat, home_lon = excluded.home_lon,
                    home_label = excluded.home_label, institution_lat = excluded.institution_lat,
                    institution_lon = excluded.institution_lon, institution_name = excluded.institution_name,
                    updated_at = excluded.updated_at, incarnation = excluded.incarnation
                """,
            arguments: [
                donation.id, donation.donor, donation.volunteer, donation.state.rawValue,
                donation.home.lat, donation.home.lon, donation.home.label,
                donation.institution?.lat, donation.institution?.lon, donation.institution?.name,
                donation.createdAt, donation.updatedAt, donation.incarnation,
            ]
        )
    }

    package func activeDonations() async throws -> StoreSnapshot {
        try await database.read { db in
            let donations = try Row.fetchAll(db, sql: "SELECT * FROM donation WHERE state NOT IN ('DELIVERED', 'CANCELLED')")
                .map(Self.donation(from:))
            let revision = try Int64.fetchOne(db, sql: "SELECT value FROM store_revision") ?? 0
            return StoreSnapshot(donations: donations, revision: revision)
        }
    }

    private static func donation(from row: Row) throws -> Donation {
        let rawState: String = row["state"]
        guard let state = DonationState(rawValue: rawState) else {
            throw DatabaseError(message: "donation \(row["id"] as String? ?? "?") has an unknown state \(rawState)")
        }
        var institution: Institution?
        if let lat = row["institution_lat"] as Double?, let lon = row["institution_lon"] as Double? {
            institution = Institution(lat: lat, lon: lon, name: row["institution_name"])
        }
        return Donation(
            id: row["id"], donor: row["donor"], volunteer: row["volunteer"], state: state,
            home: Home(lat: row["home_lat"], lon: row["home_lon"], label: row["home_label"]),
            institution: institution, createdAt: row["created_at"], updatedAt: row["updated_at"],
            incarnation: row["incarnation"]
        )
    }
}
