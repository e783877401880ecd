import ArgumentParser
import Foundation
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker

/// Attacks on the layers: one key from two sources, bad values through each source, unknown names, secrets on the
/// command line. Every setting has a flag, read after the file and the environment.
final class SettingsSourcesTests: XCTestCase {
    private let secrets = SettingsFixture.secrets

    private func file(_ text: String) throws -> String { try settingsFile(text) }

    /// The command line as `serve` reads it: ArgumentParser, then the settings' flags.
    private func flags(_ arguments: [String]) throws -> [(key: String, value: String)] {
        try ServeOptions.parse(arguments).flags()
    }

    private func refusal(file: String? = nil, environment: [String: String] = [:], arguments: [String] = []) -> String? {
        do {
            _ = try ConfigurationLoader.load(file: file, environment: secrets.merging(environment) { $1 }, flags: try flags(arguments))
            return nil
        } catch let error as ConfigurationError {
            return error.description
        } catch {
            return ServeOptions.message(for: error)
        }
    }

    func testAFlagWinsOverTheEnvironmentWhichWinsOverTheFileForTheSameKey() throws {
        let path = try file("heartbeat_seconds: 5\nhistory_size: 7\npublish_rate: 3\n")
        var environment = secrets
        environment["LOCATION_BROKER_HEARTBEAT_SECONDS"] = "6"
        environment["LOCATION_BROKER_HISTORY_SIZE"] = "8"
        let (configuration, sources) = try ConfigurationLoader.loadWithSources(
            file: path, environment: environment, flags: try flags(["--heartbeat-seconds", "9", "--config", path]))
        XCTAssertEqual(configuration.heartbeatSeconds, 9, "the flag, over the environment and the file")
        XCTAssertEqual(sources["heartbeat_seconds"], "command line")
        XCTAssertEqual(configuration.historySize, 8, "the environment, over the file")
        XCTAssertEqual(sources["history_size"], "environment LOCATION_BROKER_HISTORY_SIZE")
        XCTAssertEqual(configuration.publishRate, 3, "the file, over the default")
        XCTAssertEqual(sources["publish_rate"], "file \(path)")
        XCTAssertEqual(configuration.maxFrameBytes, 4096, "the default")
        XCTAssertNil(sources["max_frame_bytes"])
    }

    func testTheLastOfTwoFlagsForOneKeyWinsInBothSpellings() throws {
        let given = try flags(["--port", "9001", "--port=9002", "--log-level=debug"])
        XCTAssertEqual(given.map(\.key), ["port", "port", "log_level"])
        let configuration = try ConfigurationLoader.load(file: try file(""), environment: secrets, flags: given)
        XCTAssertEqual(configuration.port, 9002)
        XCTAssertEqual(configuration.logLevel, "debug")
    }

    func testAnOutOfRangeValueIsRefusedThroughEachSourceNamingIt() throws {
        let path = try file("heartbeat_seconds: 0\n")
        XCTAssertEqual(refusal(file: path), "heartbeat_seconds must be a whole number from 1 to 3600, not '0' (from \(path))")
        XCTAssertEqual(
            refusal(file: try file(""), environment: ["LOCATION_BROKER_HEARTBEAT_SECONDS": "3601"]),
            "heartbeat_seconds must be a whole number from 1 to 3600, not '3601' (from environment variable LOCATION_BROKER_HEARTBEAT_SECONDS)")
        XCTAssertEqual(
            refusal(file: try file(""), arguments: ["--heartbeat-seconds", "-1"]),
            "heartbeat_seconds must be a whole number from 1 to 3600, not '-1' (from command line)")
        XCTAssertEqual(
            refusal(file: try file(""), arguments: ["--publish-rate=0"]),
            "publish_rate must be a number from 0.001 to 100000.0, not '0' (from command line)")
        XCTAssertEqual(refusal(file: try file(""), arguments: ["--host="]), "host must not be empty (from command line)")
        XCTAssertEqual(
            refusal(file: try file(""), arguments: ["--require-email-verified", "yes"]),
            "require_email_verified must be true or false, not 'yes' (from command line)")
        XCTAssertEqual(
            refusal(file: try file(""), arguments: ["--leaflet-folder", "leaflet"]),
            "leaflet_folder must be an absolute path, not 'leaflet' (from command line)")
        // A bad flag is refused even when the file and the environment hold good values for the same key.
        XCTAssertEqual(
            refusal(file: try file("port: 80\n"), environment: ["LOCATION_BROKER_PORT": "81"], arguments: ["--port", "65536"]),
            "port must be a whole number from 0 to 65535, not '65536' (from command line)")
    }

    func testUnknownNamesAreRefusedInEverySource() throws {
        let path = try file("heartbeat_second: 5\n")
        XCTAssertEqual(refusal(file: path), "unknown setting 'heartbeat_second' in \(path); see docs/CONFIGURATION.md for the list")
        XCTAssertEqual(
            refusal(file: try file(""), environment: ["LOCATION_BROKER_HEARTBEAT_SECOND": "5"]),
            "unknown environment variable LOCATION_BROKER_HEARTBEAT_SECOND; see docs/CONFIGURATION.md for the list")
        XCTAssertEqual(
            refusal(file: try file(""), arguments: ["--heartbeat-second", "5"]),
            "unknown option '--heartbeat-second'; location-broker serve --help lists every setting's flag")
        XCTAssertEqual(
            refusal(file: try file(""), arguments: ["--heartbeat_seconds", "5"]),
            "unknown option '--heartbeat_seconds'; location-broker serve --help lists every setting's flag", "flags use dashes")
        XCTAssertEqual(
            refusal(file: try file(""), arguments: ["--port"]), "--port needs a value: --port VALUE or --port=VALUE")
        XCTAssertEqual(
            refusal(file: try file(""), arguments: ["--host", "--port", "1"]), "--host needs a value: --host VALUE or --host=VALUE")
        XCTAssertEqual(
            refusal(file: try file(""), arguments: ["--port", "1", "2"]),
            "unexpected argument '2': settings are given as --name VALUE (location-broker serve --help lists them)")
    }

    func testASecretOnTheCommandLineIsRefusedWithoutEchoingIt() throws {
        let secret = "s-0123456789-0123456789-0123456789"
        for key in ConfigurationKey.all where key.isSecret {
            for arguments in [[key.flag, secret], ["\(key.flag)=\(secret)"]] {
                let message = try XCTUnwrap(refusal(file: try file(""), arguments: arguments), key.name)
                XCTAssertEqual(
                    message,
                    "\(key.flag) would show the secret to every user of this machine (the process list); set \(key.environmentVariable) or \(key.name) in the configuration file")
                XCTAssertFalse(message.contains(secret))
            }
        }
        XCTAssertEqual(Set(ConfigurationKey.all.filter(\.isSecret).map(\.name)), ["jwt_secret", "backend_key", "cluster_secret", "webhook_secrets"])
    }

    func testEverySettingButTheSecretsHasAFlagThatSetsIt() throws {
        for key in ConfigurationKey.all where !key.isSecret {
            // A value the key accepts: its default, or its example when it has none.
            let value = try XCTUnwrap(key.defaultValue ?? key.example, "\(key.name) has neither a default nor an example")
            let given = try flags([key.flag, value])
            XCTAssertEqual(given.map(\.key), [key.name], key.flag)
            var configuration = BrokerConfiguration()
            XCTAssertNil(key.apply(&configuration, value), "\(key.name) accepts \(value)")
            // What check-config and the generated files show must read back as the same setting.
            let shown = try XCTUnwrap(key.value(configuration), key.name)
            var again = BrokerConfiguration()
            XCTAssertNil(key.apply(&again, shown), "\(key.name) accepts its own \(shown)")
            XCTAssertEqual(key.value(again), shown, key.name)
        }
        XCTAssertEqual(ConfigurationKey.flagged("--max-frame-bytes")?.name, "max_frame_bytes")
        XCTAssertEqual(Set(ConfigurationKey.all.map(\.flag)).count, ConfigurationKey.all.count, "no flag twice")
    }

    func testTheReportMasksEverySecretFromEverySource() throws {
        let fileSecret = "f-0123456789-0123456789-0123456789"
        let path = try file("backend_key: \(fileSecret)\n")
        let environment = [
            "LOCATION_BROKER_JWT_SECRET": secrets["LOCATION_BROKER_JWT_SECRET"]!,
            "LOCATION_BROKER_STORE": "postgres://broker:hunter2@db.internal/tracking",
            "LOCATION_BROKER_CLUSTER_SECRET": "new-0123456789-0123456789-0123456789,old-0123456789-0123456789-0123456789",
        ]
        let (configuration, sources) = try ConfigurationLoader.loadWithSources(file: path, environment: environment, flags: [])
        let report = ConfigurationReport(configuration, sources: sources)
        for hidden in [fileSecret, secrets["LOCATION_BROKER_JWT_SECRET"]!, "hunter2", "new-0123456789", "old-0123456789"] {
            XCTAssertFalse(report.text.contains(hidden), "\(hidden) in:\n\(report.text)")
        }
        XCTAssertEqual(report.lines.first { $0.key == "backend_key" }?.value, "*** (34 bytes)")
        XCTAssertEqual(report.lines.first { $0.key == "backend_key" }?.source, "file \(path)")
        XCTAssertEqual(report.lines.first { $0.key == "cluster_secret" }?.value, "*** (36 bytes), *** (36 bytes)")
    }
}
