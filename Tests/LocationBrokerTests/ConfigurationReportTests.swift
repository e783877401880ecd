import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// The report `location-broker check-config` prints: every effective setting with its source, secrets masked
/// (`SettingsCommandLineTests` runs the command).
final class ConfigurationReportTests: XCTestCase {
    private let jwtSecret = SettingsFixture.jwtSecret
    private let backendKey = SettingsFixture.backendKey

    private func temporaryFile(_ text: String) throws -> String { try settingsFile(text) }

    func testEverySettingIsShownWithItsSourceAndNoSecret() throws {
        let file = try temporaryFile("port: 9000\nhistory_size: 10\n")
        let environment = [
            "LOCATION_BROKER_JWT_SECRET": jwtSecret, "LOCATION_BROKER_BACKEND_KEY": backendKey,
            "LOCATION_BROKER_HISTORY_SIZE": "12",
        ]
        let (configuration, sources) = try ConfigurationLoader.loadWithSources(
            file: file, environment: environment, flags: [("log_level", "debug")])
        let report = ConfigurationReport(configuration, sources: sources)
        XCTAssertEqual(report.lines.map(\.key), ConfigurationKey.all.map(\.name), "every setting, in the docs' order")
        func line(_ key: String) -> ConfigurationReport.Line? { report.lines.first { $0.key == key } }
        XCTAssertEqual(line("port"), .init(key: "port", value: "9000", source: "file \(file)"))
        XCTAssertEqual(line("history_size"), .init(key: "history_size", value: "12", source: "environment LOCATION_BROKER_HISTORY_SIZE"))
        XCTAssertEqual(line("log_level"), .init(key: "log_level", value: "debug", source: "command line"))
        XCTAssertEqual(line("heartbeat_seconds"), .init(key: "heartbeat_seconds", value: "30", source: "default"))
        XCTAssertEqual(line("tls_cert")?.value, "(unset)")
        XCTAssertEqual(line("jwt_secret")?.value, "*** (\(jwtSecret.utf8.count) bytes)")
        XCTAssertFalse(report.text.contains(jwtSecret))
        XCTAssertFalse(report.text.contains(backendKey))
        for line in report.lines where ConfigurationReport.secretKeys.contains(line.key) {
            XCTAssertTrue(line.value == "(unset)" || line.value.hasPrefix("*** ("), "\(line.key) shows \(line.value)")
        }
    }

    func testAStorePasswordIsNeverShown() throws {
        let environment = [
            "LOCATION_BROKER_JWT_SECRET": jwtSecret, "LOCATION_BROKER_BACKEND_KEY": backendKey,
            "LOCATION_BROKER_STORE": "postgres://broker:hunter2@db.internal/tracking",
            "LOCATION_BROKER_CLUSTER_SECRET": "c-0123456789-0123456789-0123456789",
        ]
        let (configuration, sources) = try ConfigurationLoader.loadWithSources(file: try temporaryFile(""), environment: environment, flags: [])
        let text = ConfigurationReport(configuration, sources: sources).text
        XCTAssertTrue(text.contains("postgres://broker@db.internal:5432/tracking"), text)
        XCTAssertFalse(text.contains("hunter2"))
        XCTAssertFalse(text.contains("c-0123456789"))
    }
}
