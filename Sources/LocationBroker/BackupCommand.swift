import ArgumentParser
import BrokerCore
import BrokerSQLite
import Foundation

/// `location-broker backup --to FILE`: a consistent copy of the SQLite database, taken while the broker serves.
struct BackupCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the SQLite database, consistently and while the broker serves, to a new file readable by this user only.",
        discussion: """
            The database is found as serve finds it (--config, LOCATION_BROKER_DATABASE, --database); no secret is \
            needed. The copy is made through SQLite's online backup API, checked (PRAGMA integrity_check), written \
            with mode 0600 (missing folders 0700) and put at FILE only when complete. An existing FILE is refused \
            unless --force is given. docs/OPERATIONS.md, "Backup and restore", tells how to restore it and what a \
            restore means for donations, watch links and push subscriptions made after the backup.
            """
    )

    @Option(help: "The file to write the copy to.")
    var to: String

    @Flag(help: "Replace FILE if it exists.")
    var force = false

    @Option(help: "YAML configuration file (default: config/broker.yaml when it exists).")
    var config: String?

    @Option(help: "The SQLite database to copy (default: the configuration's database).")
    var database: String?

    package func run() async throws {
        let configuration: BrokerConfiguration
        do {
            configuration = try ConfigurationLoader.load(
                file: config, environment: ProcessInfo.processInfo.environment, flags: database.map { [("database", $0)] } ?? [],
                forServing: false, validating: false)
        } catch let error as ConfigurationError {
            throw StartupError(description: error.description)
        }
        if let store = configuration.store {
            throw StartupError(
                description: "the broker keeps its data in PostgreSQL (\(store.description)): back that up with pg_dump (docs/OPERATIONS.md, \"Backup and restore\")")
        }
        // Nothing this command creates may be readable by others, whatever the caller's umask.
        umask(0o077)
        do {
            let summary = try SQLiteBackup.copy(from: configuration.database, to: to, replace: force)
            print("backed up \(configuration.database) to \(to): \(summary.donations) donations, \(summary.bytes) bytes, mode 0600")
        } catch {
            throw StartupError(description: "backup failed: \(error)")
        }
    }
}
