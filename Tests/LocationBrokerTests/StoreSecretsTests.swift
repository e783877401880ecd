import BrokerStorage
import Foundation
import XCTest

@testable import LocationBroker

/// What the broker keeps in its settings gives nothing away: a PostgreSQL password shows up in no refusal, parsed or
/// not (`SQLiteFileModeTests` holds the SQLite file to its mode).
final class StoreSecretsTests: XCTestCase {
    private let secrets = [
        "LOCATION_BROKER_JWT_SECRET": "j-0123456789-0123456789-0123456789",
        "LOCATION_BROKER_BACKEND_KEY": "b-0123456789-0123456789-0123456789",
    ]

    private func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString)").appendingPathComponent(name).path
    }

    /// An empty configuration file, so that config/broker.yaml of the working folder plays no part.
    private func emptyConfiguration() throws -> String {
        let path = temporaryPath("broker.yaml")
        try PrivateFiles.createFolders(for: path)
        try Data().write(to: URL(fileURLWithPath: path))
        return path
    }

    private func refusal(environment: [String: String], flags: [(key: String, value: String)] = []) -> String? {
        do {
            _ = try ConfigurationLoader.load(file: try emptyConfiguration(), environment: environment, flags: flags)
            return nil
        } catch {
            return "\(error)"
        }
    }

    func testAStoreURLThatDoesNotParseNeverShowsItsPassword() {
        let broken = [
            "postgres://broker:hunter2@db internal/tracking",
            "postgres://broker:hunter2@db.internal:port/tracking",
            "postgres://broker:hunter2@[db/tracking",
            "postgres://broker:hunter2@db%zz/tracking",
            "mysql://broker:hunter2@db/broker",
            "broker:hunter2@db/broker",
        ]
        for url in broken {
            let refused = refusal(environment: secrets, flags: [("store", url)])
            XCTAssertEqual(refused?.hasPrefix("store "), true, "refused for the store: \(refused ?? "accepted")")
            XCTAssertEqual(refused?.contains("hunter2"), false, "\(refused ?? "")")
        }
    }

    func testThePasswordCanComeFromAFile() throws {
        let passwordFile = temporaryPath("password")
        try PrivateFiles.createFolders(for: passwordFile)
        try Data("s3cret-from-file\n".utf8).write(to: URL(fileURLWithPath: passwordFile))
        var environment = secrets
        environment["LOCATION_BROKER_STORE"] = "postgres://broker@db.internal/tracking"
        environment["LOCATION_BROKER_STORE_PASSWORD_FILE"] = passwordFile
        environment["LOCATION_BROKER_CLUSTER_SECRET"] = "c-0123456789-0123456789-0123456789"
        let store = try XCTUnwrap(try ConfigurationLoader.load(file: try emptyConfiguration(), environment: environment, flags: []).store)
        XCTAssertEqual(store.password, "s3cret-from-file", "the newline that ends the file is not part of it")

        environment["LOCATION_BROKER_STORE"] = "postgres://broker:other@db.internal/tracking"
        XCTAssertEqual(refusal(environment: environment), "store names a password and store_password_file is set too: keep the password in one place")
        environment["LOCATION_BROKER_STORE"] = nil
        XCTAssertEqual(refusal(environment: environment)?.hasPrefix("store_password_file is set but store is not"), true)
        environment["LOCATION_BROKER_STORE"] = "postgres://broker@db.internal/tracking"
        environment["LOCATION_BROKER_STORE_PASSWORD_FILE"] = passwordFile + ".missing"
        XCTAssertEqual(refusal(environment: environment)?.hasPrefix("cannot read store_password_file \(passwordFile).missing"), true)
    }
}
