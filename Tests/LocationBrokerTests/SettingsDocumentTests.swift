import Foundation
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker

/// config/broker.yaml and docs/CONFIGURATION.md's tables are made from the settings table, and every default another
/// document quotes is the table's (`SettingsCommandLineTests` holds `serve --help` to it).
final class SettingsDocumentTests: XCTestCase {
    private let root = BrokerProcess.packageRoot
    private let fix = "run scripts/generate-settings (after swift build) to write it from ConfigurationKey"

    private func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    func testConfigBrokerYamlIsMadeFromTheSettingsTable() throws {
        XCTAssertEqual(try read("config/broker.yaml"), SettingsDocument.yaml, "config/broker.yaml differs from the settings table: \(fix)")
    }

    func testTheConfigurationDocsTablesAreMadeFromTheSettingsTable() throws {
        let document = try read("docs/CONFIGURATION.md")
        XCTAssertEqual(document, try SettingsDocument.markdown(updating: document), "docs/CONFIGURATION.md's settings tables differ: \(fix)")
        for key in ConfigurationKey.all {
            XCTAssertEqual(document.components(separatedBy: "\n| `\(key.name)` | ").count, 2, "one row for \(key.name)")
        }
    }

    func testAChangedDefaultOrRangeMakesTheDocsDiffer() throws {
        let document = try read("docs/CONFIGURATION.md")
        let stale = document.replacingOccurrences(of: "| `heartbeat_seconds` | `--heartbeat-seconds` | `LOCATION_BROKER_HEARTBEAT_SECONDS` | `30` |",
                                                  with: "| `heartbeat_seconds` | `--heartbeat-seconds` | `LOCATION_BROKER_HEARTBEAT_SECONDS` | `31` |")
        XCTAssertNotEqual(stale, document, "the row is where the test expects it")
        XCTAssertEqual(try SettingsDocument.markdown(updating: stale), document, "the generator puts the table's default back")
        XCTAssertThrowsError(try SettingsDocument.markdown(updating: "# no tables\n"), "a document without the markers is an error")
    }

    /// Where another document names a setting and its default, `` `key` (default V`` or `` `key` (V)``, V is
    /// the table's default (a unit may follow it: `(default 30 s)`).
    func testOtherDocumentsQuoteTheTablesDefaults() throws {
        var checked = 0
        for path in ["README.md", "docs/OPERATIONS.md", "docs/SECURITY.md", "docs/SCALING.md", "docs/PROTOCOL.md", "docs/CLIENTS.md", "docs/CONFIGURATION.md"] {
            for mention in DefaultMention.all(in: try read(path)) {
                guard let key = ConfigurationKey.named(mention.key) else { continue }
                checked += 1
                XCTAssertEqual(
                    mention.value, key.defaultValue ?? "none",
                    "\(path) line \(mention.line) gives \(mention.key) the default \(mention.value); the settings table says \(key.defaultValue ?? "none"): write the table's value there, or link to docs/CONFIGURATION.md")
            }
        }
        XCTAssertGreaterThan(checked, 20, "the mentions are found")
    }

    func testTheMentionFinderReadsTheFormsTheDocsUse() {
        let text = """
            `heartbeat_seconds` (default 30) and `log_level` (default `info`); `max_frame_bytes` (4096) closes,
            `history_size` kept positions (default 32), `publish_rate` (1/s), `heartbeat_seconds` (so above 30 s),
            `window_tolerance_ms` (default 2 s, at most 10 s), (`database`, default `data/x`), `port` (60 s with its default of 20;
            `require_email_verified` is true (the default), `jwks_file` is set; otherwise SIGHUP keeps its default action
            """
        XCTAssertEqual(
            DefaultMention.all(in: text).map { "\($0.line):\($0.key)=\($0.value)" },
            ["1:heartbeat_seconds=30", "1:log_level=info", "1:max_frame_bytes=4096", "2:history_size=32", "2:publish_rate=1", "3:window_tolerance_ms=2",
             "3:database=data/x", "3:port=20"])
    }
}

/// A default quoted in prose next to its setting's key.
struct DefaultMention: Equatable {
    let line: Int
    let key: String
    let value: String

    // `key`, then within 40 characters either `(V` or `default V` (also `default of V`), V a number followed by a
    // unit or the end of the clause, or a `code` value.
    private static let value = #"(?:([0-9][0-9.]*)(?=[ /a-zA-Z%]*[),;.])|`([^`]+)`)"#
    private static let pattern = try! NSRegularExpression(
        pattern: #"`([a-z_]+)`(?:[^`()\n]{0,40}\(|[^`\n]{0,40}?\bdefault:? (?:of )?)"# + value)

    static func all(in text: String) -> [DefaultMention] {
        text.components(separatedBy: "\n").enumerated().flatMap { index, line in
            let range = NSRange(line.startIndex..., in: line)
            return pattern.matches(in: line, range: range).map { match in
                let number = Range(match.range(at: 2), in: line).map { String(line[$0]) }
                let code = Range(match.range(at: 3), in: line).map { String(line[$0]) }
                return DefaultMention(line: index + 1, key: String(line[Range(match.range(at: 1), in: line)!]), value: number ?? code ?? "")
            }
        }
    }
}
