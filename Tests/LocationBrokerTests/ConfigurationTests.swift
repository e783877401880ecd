import Foundation
import XCTest

@testable import BrokerCore
@testable import BrokerPostgres
@testable import BrokerTestSupport
@testable import LocationBroker
@testable import TrackingPage

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

    func testJWKSModeRefusesToStartWithoutAudienceAndIssuer() throws {
        let backendKey = ["LOCATION_BROKER_BACKEND_KEY": "b-0123456789-0123456789-0123456789"]
        func refusal(_ settings: [String: String]) -> String? {
            do {
                _ = try ConfigurationLoader.load(file: nil, environment: backendKey.merging(settings) { $1 }, flags: [])
                return nil
            } catch {
                return "\(error)"
            }
        }
        let why = "an identity provider's keys sign the tokens of every project it serves (Firebase's sign those of every Firebase project), so without them a token from anybody's project would be accepted. Firebase: audience: <project id>, issuer: https://securetoken.google.com/<project id>."
        XCTAssertEqual(
            refusal(["LOCATION_BROKER_JWKS_URL": "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"]),
            "jwks_url needs audience and issuer to be set: " + why)
        XCTAssertEqual(
            refusal(["LOCATION_BROKER_JWKS_FILE": "/etc/keys.json", "LOCATION_BROKER_AUDIENCE": "ponte"]), "jwks_file needs issuer to be set: " + why)
        XCTAssertEqual(
            refusal(["LOCATION_BROKER_JWKS_URL": "http://keys.example.org/jwks.json"]),
            "jwks_url must be an https:// URL (http:// only for 127.0.0.1, ::1 or localhost), not 'http://keys.example.org/jwks.json' (from environment variable LOCATION_BROKER_JWKS_URL)")
        XCTAssertEqual(
            refusal(["LOCATION_BROKER_JWKS_URL": "https://a.example/k", "LOCATION_BROKER_JWKS_FILE": "/k.json", "LOCATION_BROKER_AUDIENCE": "p", "LOCATION_BROKER_ISSUER": "i"]),
            "jwks_url and jwks_file are both set; set one of them")
        XCTAssertEqual(refusal(["LOCATION_BROKER_REQUIRE_EMAIL_VERIFIED": "yes", "LOCATION_BROKER_JWT_SECRET": "j-0123456789-0123456789-0123456789"]),
            "require_email_verified must be true or false, not 'yes' (from environment variable LOCATION_BROKER_REQUIRE_EMAIL_VERIFIED)")
        let firebase = try ConfigurationLoader.load(
            file: nil,
            environment: backendKey.merging([
                "LOCATION_BROKER_JWKS_URL": "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com",
                "LOCATION_BROKER_AUDIENCE": "ponte", "LOCATION_BROKER_ISSUER": "https://securetoken.google.com/ponte",
            ]) { $1 }, flags: [])
        XCTAssertEqual(firebase.jwksURL?.host, "www.googleapis.com")
    }

    func testHalfATLSConfigurationIsRefused() {
        var configuration = BrokerConfiguration()
        configuration.jwtSecret = SettingsFixture.jwtSecret
        configuration.backendKey = SettingsFixture.backendKey
        configuration.tlsCert = "/somewhere/cert.pem"
        XCTAssertThrowsError(try ConfigurationLoader.validate(configuration)) { error in
            XCTAssertEqual("\(error)", "tls_cert and tls_key go together: set both to serve TLS, or neither")
        }
    }

    func testMapSettingsAreCheckedLikeEveryOther() throws {
        func load(_ pairs: [String: String]) throws -> BrokerConfiguration {
            var configuration = BrokerConfiguration()
            for (name, value) in pairs {
                let key = try XCTUnwrap(ConfigurationKey.named(name), name)
                if let problem = key.apply(&configuration, value) { throw ConfigurationError(description: "\(name) \(problem)") }
            }
            try configuration.map.validate()
            return configuration
        }
        XCTAssertEqual(BrokerConfiguration().map.leafletFolder, "/usr/share/javascript/leaflet", "Debian's libjs-leaflet by default")
        XCTAssertEqual(try load(["leaflet_folder": "/opt/leaflet"]).map.leafletFolder, "/opt/leaflet")
        XCTAssertThrowsError(try load(["leaflet_folder": "leaflet"]), "a relative folder depends on where the broker starts")
        XCTAssertThrowsError(try load(["leaflet_folder": ""]))
        XCTAssertThrowsError(try load(["map_tiles_url": "https://{s}.tiles.example.org/{z}/{x}/{y}"]))
        XCTAssertThrowsError(try load(["map_tiles_url": "https://tiles.example.org/{z}/{x}/{y}"]), "needs its attribution") { error in
            XCTAssertTrue("\(error)".contains("map_tiles_attribution"), "\(error)")
        }
        XCTAssertThrowsError(try load(["map_tiles_attribution": "© someone"]), "an attribution for no tile server")
        XCTAssertThrowsError(try load(["map_tiles_file": "/x.mbtiles", "map_tiles_url": "https://t.example/{z}/{x}/{y}", "map_tiles_attribution": "a"]))
        XCTAssertThrowsError(try load(["map_tiles_url": "https://t.example/{z}/{x}/{y}", "map_tiles_attribution": "a\nb"]))
        let served = try load(["map_tiles_url": "https://t.example/{z}/{x}/{y}", "map_tiles_attribution": "© OpenStreetMap contributors"])
        XCTAssertEqual(served.map.tilesURL?.origin, "https://t.example")
        XCTAssertEqual(try load(["map_tiles_file": "/srv/map.mbtiles"]).map.tilesFile, "/srv/map.mbtiles")
    }
}
