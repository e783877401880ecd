/// Which release last opened a database, and the refusal of a database migrated by a newer release than this one.
///
/// Both stores keep the names of the migrations they applied (GRDB's `grdb_migrations`, PostgreSQL's
/// `lb_migrations`); a name this build does not know means a newer release changed the schema, which this one
/// might misread or damage. The release that last opened the database is kept beside them so the refusal can name
/// the version to run.
package enum SchemaRelease {
    /// The refusal for a database that applied `applied` migrations when this build knows `known`, or nil when
    /// it knows every one. `writtenBy` is the release the database says last opened it.
    package static func refusal(store: String, applied: Set<String>, known: [String], writtenBy: String?) -> NewerSchemaError? {
        let unknown = applied.subtracting(known).sorted()
        guard !unknown.isEmpty else { return nil }
        return NewerSchemaError(store: store, unknownMigrations: unknown, writtenBy: writtenBy)
    }
}

/// A database whose schema is newer than this build knows: the broker refuses it rather than misread it.
package struct NewerSchemaError: Error, CustomStringConvertible {
    let store: String
    let unknownMigrations: [String]
    let writtenBy: String?

    package var description: String {
        let release = writtenBy.map { "location-broker \($0)" } ?? "a newer location-broker"
        let run = writtenBy.map { "run location-broker \($0) or newer" } ?? "run the release that upgraded it"
        return "the \(store) holds schema changes (\(unknownMigrations.joined(separator: ", "))) made by \(release), "
            + "which this location-broker \(BrokerRelease.version) does not know: \(run), "
            + "or restore the backup taken before the upgrade (docs/OPERATIONS.md, \"Downgrading\")"
    }
}
