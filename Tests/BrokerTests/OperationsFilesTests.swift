import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// The files operators install name only what the broker really has: every metric an alert rule or a dashboard
/// panel reads is exported by a live broker at /metrics.
final class OperationsFilesTests: XCTestCase {
    private static let alerts = BrokerProcess.packageRoot.appendingPathComponent("config/prometheus/alerts.yml")

    /// The metric names in a PromQL text: words of the broker's and the process's families.
    static func metricNames(in text: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: #"\b(?:broker|process)_[a-z_]+\b"#)
        let range = NSRange(text.startIndex..., in: text)
        return Set(pattern.matches(in: text, range: range).compactMap { Range($0.range, in: text).map { String(text[$0]) } })
    }

    func testEveryMetricAnAlertReadsIsExportedByALiveBroker() async throws {
        let live = try await startBroker()
        let response = try await live.request(.get, "/metrics")
        let exported = String(buffer: response.body ?? .init())
        try await live.stop()
        let rules = try String(contentsOf: Self.alerts, encoding: .utf8)
        let expressions = rules.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("expr:") }.joined(separator: "\n")
        let named = Self.metricNames(in: expressions)
        XCTAssertGreaterThanOrEqual(named.count, 6, "the rules read the broker's metrics: \(named.sorted())")
        for name in named.sorted() {
            XCTAssertTrue(exported.contains("\n# TYPE \(name) ") || exported.hasPrefix("# TYPE \(name) "), "\(name) is not exported at /metrics")
        }
    }

    func testEveryMetricTheGrafanaDashboardQueriesIsExportedByALiveBroker() async throws {
        let live = try await startBroker()
        let response = try await live.request(.get, "/metrics")
        let exported = String(buffer: response.body ?? .init())
        try await live.stop()
        let url = BrokerProcess.packageRoot.appendingPathComponent("config/grafana/location-broker.json")
        let dashboard = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let panels = try XCTUnwrap(dashboard["panels"] as? [[String: Any]])
        var queries = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        let variables = (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        queries += variables.compactMap { $0["type"] as? String == "query" ? $0["query"] as? String : nil }
        XCTAssertGreaterThanOrEqual(queries.count, panels.count, "every panel has a query")
        let named = Self.metricNames(in: queries.joined(separator: "\n"))
        XCTAssertGreaterThanOrEqual(named.count, 10, named.sorted().joined(separator: ", "))
        for name in named.sorted() {
            XCTAssertTrue(exported.contains("\n# TYPE \(name) ") || exported.hasPrefix("# TYPE \(name) "), "\(name) is not exported at /metrics")
        }
    }
}
