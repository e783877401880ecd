import BrokerStorage
import GRDB

/// The broker's SQLite file, opened once and shared by the donation store and the event outbox, so that a donation
/// change and the events it causes are written in one transaction.
enum SQLiteDatabase {
    /// Opens (creating if needed) the database at `path`, with its folder, and runs pending migrations
    /// (``SQLiteDonationStore/migrator``), after refusing a database a newer release migrated (``SchemaRelease``). What it creates is readable by the broker's user only (folders 0700, the
    /// file 0600, and so SQLite's journal files, which take the file's mode), whatever the umask: donors' homes are
    /// in it. WAL mode with `synchronous=FULL`: each acknowledged write survives a crash of the process or of the machine.
    static func open(path: String) throws -> DatabaseQueue {
        try PrivateFiles.createFolders(for: path)
        try PrivateFiles.createFile(path)
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        configuration.busyMode = .timeout(5)
        let database = try DatabaseQueue(path: path, configuration: configuration)
        let migrator = SQLiteDonationStore.migrator
        try database.read { db in
            // A database a newer release migrated is refused before anything is written to it.
            let writtenBy = try db.tableExists("broker_release")
                ? try String.fetchOne(db, sql: "SELECT version FROM broker_release") : nil
            if let refusal = SchemaRelease.refusal(
                store: "SQLite database \(path)", applied: try migrator.appliedIdentifiers(db),
                known: migrator.migrations, writtenBy: writtenBy)
            {
                throw refusal
            }
        }
        try migrator.migrate(database)
        try database.write { db in
            try db.execute(sql: "DELETE FROM broker_release")
            try db.execute(sql: "INSERT INTO broker_release (version) VALUES (?)", arguments: [BrokerRelease.version])
        }
        return database
    }
}
