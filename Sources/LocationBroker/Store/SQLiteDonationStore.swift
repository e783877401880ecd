import BrokerCore
import BrokerProtocol
import Foundation
import GRDB

/// Donations in a SQLite file through GRDB, in WAL mode with `synchronous=FULL` so that each acknowledged
/// write survives a crash of the process or of the machine.
struct SQLiteDonationStore: DonationStore {
    private let database: DatabaseQueue

    /// Opens (creating if needed) the database at `path`, with its folder, and runs pending migrations.
    /// What it creates is readable by the broker's user only (folders 0700, the file 0600, and so SQLite's
    /// journal files, which take the file's mode), whatever the umask: donors' homes are in it.
    init(path: String) throws {
        try PrivateFiles.createFolders(for: path)
        try PrivateFiles.createFile(path)
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        configuration.busyMode = .timeout(5)
        database = try DatabaseQueue(path: path, configuration: configuration)
        try Self.migrator.migrate(database)
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
        return migrator
    }

    package func donation(id: String) async throws -> Donation? {
        try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM donation WHERE id = ?", arguments: [id]).map(Self.donation(from:))
        }
    }

    package func change(id: String, _ decide: @escaping @Sendable (Donation?) throws -> DonationDecision) async throws -> DonationChange? {
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
            return DonationChange(id: id, revision: revision, old: old, new: new)
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
