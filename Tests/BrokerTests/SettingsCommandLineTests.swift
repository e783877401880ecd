import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// The settings through the built `location-broker`: `check-config` takes any setting as a flag, refuses a secret
/// one, prints the effective settings and fails with serve's refusal; `serve --help` lists every setting as the
/// settings table makes it; `serve` runs until it is stopped.
final class SettingsCommandLineTests: XCTestCase {
    private let secrets = SettingsFixture.secrets
    private let jwtSecret = SettingsFixture.jwtSecret
    private let backendKey = SettingsFixture.backendKey

    private func file(_ text: String) throws -> String { try settingsFile(text) }

    func testCheckConfigTakesAnySettingAsAFlagAndRefusesASecretOneWithoutEchoingIt() async throws {
        let path = try file("heartbeat_seconds: 5\n")
        let environment = secrets.merging(["LOCATION_BROKER_HEARTBEAT_SECONDS": "6"]) { $1 }
        let read = try await BrokerCommandLine.run(
            ["check-config", "--config", path, "--heartbeat-seconds", "7", "--window-tolerance-ms=0", "--log-format", "JSON"], environment: environment)
        XCTAssertEqual(read.status, 0, read.output)
        XCTAssertTrue(read.output.contains("heartbeat_seconds                = 7  (command line)"), read.output)
        XCTAssertTrue(read.output.contains("window_tolerance_ms              = 0  (command line)"), read.output)
        XCTAssertTrue(read.output.contains("log_format                       = json  (command line)"), read.output)

        let secret = "x-0123456789-0123456789-0123456789"
        let refused = try await BrokerCommandLine.run(["check-config", "--config", path, "--backend-key", secret], environment: secrets)
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.output.contains("--backend-key would show the secret to every user of this machine"), refused.output)
        XCTAssertFalse(refused.output.contains(secret), refused.output)
        let unknown = try await BrokerCommandLine.run(["check-config", "--config", path, "--heartbeat-second", "7"], environment: secrets)
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertTrue(unknown.output.contains("unknown option '--heartbeat-second'"), unknown.output)
    }

    func testTheCommandPrintsTheReportAndFailsWithServesRefusal() async throws {
        func run(_ environment: [String: String]) async throws -> BrokerCommandLine.Outcome {
            try await BrokerCommandLine.run(["check-config", "--config", try file("# defaults\n"), "--port", "9001"], environment: environment)
        }
        let good = try await run(["LOCATION_BROKER_JWT_SECRET": jwtSecret, "LOCATION_BROKER_BACKEND_KEY": backendKey])
        XCTAssertEqual(good.status, 0, good.output)
        XCTAssertTrue(good.output.contains("port "), good.output)
        XCTAssertTrue(good.output.contains("= 9001  (command line)"), good.output)
        XCTAssertFalse(good.output.contains(backendKey))
        let refused = try await run(["LOCATION_BROKER_JWT_SECRET": jwtSecret])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.output.contains("no backend key: set LOCATION_BROKER_BACKEND_KEY"), refused.output)
    }

    func testACommandThatDoesNotEndIsKilledAtItsDeadlineAndFails() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("settings-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("broker.sqlite").path
        do {
            let ended = try await BrokerCommandLine.run(
                ["serve", "--config", try file(""), "--port", "0", "--database", database], environment: secrets, seconds: 2)
            XCTFail("serve runs until it is stopped, yet it ended: \(ended.status) \(ended.output)")
        } catch {
            XCTAssertTrue(error is ChildProcess.TimedOut, "\(error)")
        }
    }

    func testServeHelpListsEverySettingWithItsFlagDefaultAndRange() async throws {
        let help = try await BrokerCommandLine.run(["serve", "--help"])
        let output = help.output
        XCTAssertEqual(help.status, 0, output)
        XCTAssertTrue(output.contains(SettingsDocument.help), "the list as made, unwrapped by ArgumentParser:\n\(output)")
        let words = output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for key in ConfigurationKey.all {
            XCTAssertTrue(output.contains("\n\(SettingsDocument.headline(key))\n"), "\(key.name) in:\n\(output)")
            XCTAssertTrue(words.contains(key.summary), key.name)
            XCTAssertTrue(words.contains("\(key.environmentVariable); default \(key.defaultValue ?? key.whenUnset);"), key.name)
        }
        XCTAssertTrue(output.contains("(LOCATION_BROKER_PORT; default 8080; 0 to 65535)"), output)
    }
}
