import BrokerStorage
import Foundation
import GRDB
import XCTest

@testable import BrokerCore
@testable import BrokerSQLite
@testable import BrokerTestSupport
@testable import LocationBroker

/// The SQLite schema records the migrations applied and the release that last opened it: a database of the previous
/// release is upgraded with its donations, and one a newer release migrated is refused with the version to run.
final class SchemaReleaseTests: XCTestCase {
    private func databasePath() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        return folder.appendingPathComponent("broker.sqlite").path
    }

    /// The last migration of the release before this one (1.0.0 added `v5-release`).
    private static let previousReleaseLastMigration = "v4-events"

    func testADatabaseOfThePreviousReleaseIsUpgradedWithItsDonations() async throws {
        let path = try databasePath()
        // The previous release's schema, with a donation on its way to the institution, written as that release did.
        let previous = try DatabaseQueue(path: path)
        try SQLiteDonationStore.migrator.migrate(previous, upTo: Self.previousReleaseLastMigration)
        try await previous.write { db in
            try db.execute(
                sql: """
                    INSERT INTO donation (id, donor, volunteer, state, home_lat, home_lon, home_label, institution_lat, institution_lon,
                        institution_name, created_at, updated_at, incarnation)
                    VALUES ('d-old', 'donor@example.org', 'vol@example.org', 'BEING-TAKEN-TO', -34.6037, -58.3816, 'Av. Corrientes 1234',
                        -34.5875, -58.4206, 'Caritas Palermo', 1763757600000, 1763757600000, '00112233445566778899aabbccddeeff')
                    """)
            try db.execute(sql: "UPDATE store_revision SET value = 1")
        }
        try previous.close()

        let live = try await startBroker(database: path)
        let answer = try await live.backend(.get, "/v1/donations/d-old")
        XCTAssertEqual(answer.status, .ok, String(buffer: answer.body ?? .init()))
        XCTAssertTrue(String(buffer: answer.body ?? .init()).contains("BEING-TAKEN-TO"))
        let upgraded = try DatabaseQueue(path: path)
        defer { try? upgraded.close() }
        let (applied, release) = try await upgraded.read { db in
            (try SQLiteDonationStore.migrator.appliedIdentifiers(db), try String.fetchOne(db, sql: "SELECT version FROM broker_release"))
        }
        XCTAssertEqual(applied, Set(SQLiteDonationStore.migrator.migrations))
        XCTAssertEqual(release, BrokerRelease.version)
    }

    func testABrokerRefusesADatabaseANewerReleaseMigratedAndNamesTheVersionToRun() async throws {
        let path = try databasePath()
        try SQLiteDatabase.open(path: path).close()
        // What a later release would leave: a migration this build does not know, and its version.
        let later = try DatabaseQueue(path: path)
        try await later.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v9-from-the-future')")
            try db.execute(sql: "UPDATE broker_release SET version = '9.9.9'")
        }
        try later.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        XCTAssertThrowsError(try SQLiteDatabase.open(path: path)) { error in
            XCTAssertTrue("\(error)".contains("run location-broker 9.9.9 or newer"), "\(error)")
            XCTAssertTrue("\(error)".contains("v9-from-the-future"), "\(error)")
        }
        let serve = try await BrokerCommandLine.run(
            ["serve", "--config", try settingsFile("# defaults\n"), "--port", "0", "--database", path], environment: SettingsFixture.secrets)
        XCTAssertEqual(serve.status, 1, serve.output)
        XCTAssertTrue(serve.output.contains("made by location-broker 9.9.9"), serve.output)
        XCTAssertTrue(serve.output.contains("run location-broker 9.9.9 or newer"), serve.output)
        let after = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertEqual(before, after, "the refused database was written to")
    }

    func testVersionPrintsTheReleaseAndTheProtocol() async throws {
        let version = try await BrokerCommandLine.run(["--version"])
        XCTAssertEqual(version.status, 0, version.output)
        XCTAssertEqual(version.output.trimmingCharacters(in: .whitespacesAndNewlines), "location-broker \(BrokerRelease.version) (protocol 1)")
        let changelog = try String(contentsOfFile: #filePath.replacingOccurrences(of: "Tests/BrokerTests/SchemaReleaseTests.swift", with: "CHANGELOG.md"), encoding: .utf8)
        XCTAssertTrue(changelog.contains("## [\(BrokerRelease.version)] - "), "CHANGELOG.md has no entry for \(BrokerRelease.version)")
    }
}
