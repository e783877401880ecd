import BrokerStorage

/// One node's storage: the donation store and the event outbox on the broker's SQLite file, opened once and shared,
/// so that a donation change and the events it causes are written in one transaction.
package struct SQLiteStorage: Sendable {
    package let store: SQLiteDonationStore
    package let eventOutbox: SQLiteEventOutbox

    /// Opens (creating if needed, and migrating) the database at `path`, as ``SQLiteDatabase/open(path:)`` does.
    package init(path: String) throws {
        let database = try SQLiteDatabase.open(path: path)
        store = SQLiteDonationStore(database: database)
        eventOutbox = SQLiteEventOutbox(database: database)
    }
}
