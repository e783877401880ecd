import Foundation
import Logging
import XCTest

@testable import BrokerPostgres
@testable import BrokerStorage
@testable import BrokerTestSupport

/// The PostgreSQL store records the migrations it applied and the release that last opened it (`lb_migrations`,
/// `lb_release`), as the SQLite file does, and refuses a store a newer release migrated with the version to run.
final class PostgresSchemaReleaseTests: XCTestCase {
    private static let keys = ClusterKeys(secrets: ["schema-test-secret-0123456789-0123456789"])
    private static let logger: Logger = {
        var logger = Logger(label: "schema-test")
        logger.logLevel = .warning
        return logger
    }()

    func testAStoreANewerReleaseMigratedIsRefusedWithTheVersionToRun() async throws {
        let server = try await PostgresServer.shared()
        let url = try await server.makeDatabase()
        let location = try PostgresLocation(url)
        _ = try await PostgresSchema.prepare(location, keys: Self.keys, logger: Self.logger)
        let name = URL(string: url)?.lastPathComponent ?? ""
        let recorded = try await server.psql("SELECT version FROM lb_release", database: name)
        XCTAssertEqual(recorded.trimmingCharacters(in: .whitespacesAndNewlines), BrokerRelease.version)

        try await server.psql("INSERT INTO lb_migrations (version) VALUES ('v9-from-the-future'); UPDATE lb_release SET version = '9.9.9'", database: name)
        do {
            _ = try await PostgresSchema.prepare(location, keys: Self.keys, logger: Self.logger)
            XCTFail("a store a newer release migrated was opened")
        } catch {
            XCTAssertTrue("\(error)".contains("run location-broker 9.9.9 or newer"), "\(error)")
            XCTAssertTrue("\(error)".contains("v9-from-the-future"), "\(error)")
        }
        let after = try await server.psql("SELECT version FROM lb_release", database: name)
        XCTAssertEqual(after.trimmingCharacters(in: .whitespacesAndNewlines), "9.9.9", "the refused store was written to")
    }
}
