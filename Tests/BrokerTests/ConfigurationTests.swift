import Foundation
import XCTest

@testable import BrokerPostgres
@testable import BrokerTestSupport
@testable import LocationBroker

/// Settings come in layers (defaults, file, environment, flags) and mistakes are refused with a clear reason.
final class ConfigurationTests: XCTestCase {
    private let secrets = SettingsFixture.secrets

    private func file(_ text: String) throws -> String { try settingsFile(text) }

    private func refusal(file: String? = nil, environment: [String: String], flags: [(key: String, value: String)] = []) -> String? {
        do {
            _ = try ConfigurationLoader.load(file: file, environment: environment, flags: flags)
            return nil
        } catch {
            return "\(error)"
        }
    }

    func testFlagsOverEnvironmentOverFileOverDefaults() throws {
        let path = try file("port: 9000\nhistory_size: 10\npublish_rate: 2\nlog_level: debug\n")
        var environment = secrets
        environment["LOCATION_BROKER_PORT"] = "9100"
        environment["LOCATION_BROKER_HISTORY_SIZE"] = "20"
        let configuration = try ConfigurationLoader.load(file: path, environment: environment, flags: [("port", "9200")])
        XCTAssertEqual(configuration.port, 9200, "flag")
        XCTAssertEqual(configuration.historySize, 20, "environment")
        XCTAssertEqual(configuration.publishRate, 2, "file")
        XCTAssertEqual(configuration.logLevel, "debug", "file")
        XCTAssertEqual(configuration.arrivalRadiusMeters, 150, "default")
    }

    func testTheShippedConfigurationFileHoldsTheDefaults() throws {
        let shipped = BrokerProcess.packageRoot.appendingPathComponent("config/broker.yaml").path
        let loaded = try ConfigurationLoader.load(file: shipped, environment: secrets, flags: [])
        var defaults = BrokerConfiguration()
        defaults.jwtSecret = secrets["LOCATION_BROKER_JWT_SECRET"]
        defaults.backendKey = secrets["LOCATION_BROKER_BACKEND_KEY"]
        XCTAssertEqual(String(describing: loaded), String(describing: defaults))
    }

    func testMistakesAreRefusedWithTheirReason() throws {
        XCTAssertEqual(refusal(environment: [:])?.hasPrefix("no way to verify client tokens"), true)
        XCTAssertEqual(refusal(environment: ["LOCATION_BROKER_JWT_SECRET": "short", "LOCATION_BROKER_BACKEND_KEY": secrets["LOCATION_BROKER_BACKEND_KEY"]!])?
            .hasPrefix("jwt_secret is 5 bytes; it must be at least 32"), true)
        XCTAssertEqual(refusal(environment: ["LOCATION_BROKER_JWT_SECRET": secrets["LOCATION_BROKER_JWT_SECRET"]!])?.hasPrefix("no backend key"), true)
        var same = secrets
        same["LOCATION_BROKER_BACKEND_KEY"] = same["LOCATION_BROKER_JWT_SECRET"]
        XCTAssertEqual(refusal(environment: same), "backend_key and jwt_secret must differ: whoever holds the JWT secret could otherwise change donations.")
        var typo = secrets
        typo["LOCATION_BROKER_PUBLISH_RAET"] = "5"
        XCTAssertEqual(refusal(environment: typo), "unknown environment variable LOCATION_BROKER_PUBLISH_RAET; see docs/CONFIGURATION.md for the list")
        var badNumber = secrets
        badNumber["LOCATION_BROKER_PORT"] = "eighty"
        XCTAssertEqual(refusal(environment: badNumber), "port must be a whole number from 0 to 65535, not 'eighty' (from environment variable LOCATION_BROKER_PORT)")
        XCTAssertEqual(refusal(file: try file("prot: 80\n"), environment: secrets)?.hasPrefix("unknown setting 'prot'"), true)
        XCTAssertEqual(refusal(file: try file("port: [1, 2]\n"), environment: secrets)?.hasSuffix("port must be a single value, not a list or mapping"), true)
        XCTAssertEqual(refusal(file: try file("port: 80\n  bad: indentation\n"), environment: secrets)?.contains("is not valid YAML"), true)
        XCTAssertEqual(refusal(file: "/nonexistent/broker.yaml", environment: secrets)?.hasPrefix("cannot read the configuration file /nonexistent/broker.yaml"), true)
        XCTAssertEqual(refusal(environment: secrets, flags: [("log_level", "loud")]), "log_level must be one of trace, debug, info, notice, warning, error, critical, not 'loud' (from command line)")
    }

    func testAPostgresStoreIsReadFromItsURLAndMistakesAreNamed() throws {
        var environment = secrets
        environment["LOCATION_BROKER_STORE"] = "postgres://broker:s%40cret@db.internal:5433/tracking"
        environment["LOCATION_BROKER_CLUSTER_SECRET"] = "c-0123456789-0123456789-0123456789"
        let remote = try XCTUnwrap(try ConfigurationLoader.load(file: nil, environment: environment, flags: []).store)
        XCTAssertEqual(remote.endpoint, .tcp(host: "db.internal", port: 5433))
        XCTAssertEqual(remote.username, "broker")
        XCTAssertEqual(remote.password, "s@cret")
        XCTAssertEqual(remote.database, "tracking")
        XCTAssertEqual(remote.tls, .require, "TLS by default beyond this machine")
        let socket = try PostgresLocation("postgresql://lb@/broker?host=/run/postgresql")
        XCTAssertEqual(socket.endpoint, .socket(path: "/run/postgresql/.s.PGSQL.5432"))
        XCTAssertEqual(socket.tls, .disable)
        XCTAssertEqual(try PostgresLocation("postgres://lb@127.0.0.1/broker").tls, .disable, "no TLS on loopback by default")
        XCTAssertEqual(try PostgresLocation("postgres://lb@127.0.0.1/broker?sslmode=require").tls, .require)

        let refusals = [
            "mysql://lb@db/broker": "store must be a postgres://user@host/database URL, not 'mysql://lb@db/broker' (from command line)",
            "postgres://db/broker": "store names no user (postgres://USER@host/database) (from command line)",
            "postgres://lb@db": "store names no database (postgres://user@host/DATABASE) (from command line)",
            "postgres://lb@db/broker?sslmode=maybe": "store has sslmode=maybe; it must be disable, prefer or require (from command line)",
            "postgres://lb@db/broker?timeout=5": "store has an unknown parameter 'timeout'; known: sslmode, host (from command line)",
            "postgres://lb:hunter2@db/broker?x=1": "store has an unknown parameter 'x'; known: sslmode, host (from command line)",
        ]
        for (url, expected) in refusals {
            XCTAssertEqual(refusal(environment: secrets, flags: [("store", url)]), expected)
        }
        XCTAssertEqual(
            refusal(environment: secrets, flags: [("store", "mysql://lb:hunter2@db/broker")])?.contains("hunter2"), false,
            "a refusal never shows the password")
    }

    func testAPostgresStoreIsRefusedWithoutAClusterSecretAndTheSecretsAreAList() throws {
        var environment = secrets
        environment["LOCATION_BROKER_STORE"] = "postgres://lb@127.0.0.1/broker"
        let missing = try XCTUnwrap(refusal(environment: environment))
        XCTAssertTrue(missing.hasPrefix("a PostgreSQL store needs cluster_secret: set LOCATION_BROKER_CLUSTER_SECRET"), missing)

        environment["LOCATION_BROKER_CLUSTER_SECRET"] = "too-short"
        XCTAssertEqual(
            refusal(environment: environment),
            "cluster_secret number 1 is 9 bytes; each must be at least 32 (for example: openssl rand -hex 32).")
        environment["LOCATION_BROKER_CLUSTER_SECRET"] = secrets["LOCATION_BROKER_JWT_SECRET"]
        XCTAssertEqual(refusal(environment: environment), "cluster_secret must differ from jwt_secret and backend_key: each opens something else.")

        // Rotation: the first seals, every one opens.
        environment["LOCATION_BROKER_CLUSTER_SECRET"] = "new-0123456789-0123456789-0123456789, old-0123456789-0123456789-0123456789"
        let loaded = try ConfigurationLoader.load(file: nil, environment: environment, flags: [])
        XCTAssertEqual(loaded.clusterSecrets, ["new-0123456789-0123456789-0123456789", "old-0123456789-0123456789-0123456789"])

        // One node, on SQLite, needs none.
        XCTAssertNil(try ConfigurationLoader.load(file: nil, environment: secrets, flags: []).clusterSecrets)
    }

    func testEveryKeyHasItsEnvironmentVariable() {
        for key in ConfigurationKey.all {
            XCTAssertEqual(key.environmentVariable, "LOCATION_BROKER_" + key.name.uppercased())
            XCTAssertFalse(key.summary.isEmpty, key.name)
        }
        XCTAssertEqual(Set(ConfigurationKey.all.map(\.name)).count, ConfigurationKey.all.count, "no key twice")
    }
}
