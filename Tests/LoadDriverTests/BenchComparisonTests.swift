import FleetSimulation
import XCTest

@testable import LoadDriver

/// The baseline's side of the bench: which server a report measured, the broker ÷ baseline ratios, and the
/// table that scripts/bench writes into docs/BENCHMARKS.md.
final class BenchComparisonTests: XCTestCase {
    private func report(_ target: BenchServer, scenario: BenchScenario = .pairs, cpu: Double?, p99: Double?, kb: Double?, lost: Int = 0) -> BenchReport {
        var histogram = LatencyHistogram()
        if let p99 { histogram.record(microseconds: Int64(p99 * 1_000)) }
        var results = BenchReport.Results()
        results.connections = 400
        results.published = 4_000
        results.expectedDeliveries = 4_000
        results.deliveries = 4_000 - lost
        results.lost = lost
        if p99 != nil { results.latency = histogram.summary }
        return BenchReport(
            target: target, startedAt: "2026-11-22T01:00:00Z", command: "tracker-sim bench", machine: .init(cores: 2, memoryGiB: 23.5, kernel: "6.1"),
            parameters: .init(scenario: scenario, pairs: 200, rate: 2_000, duration: 20, procs: 2, sourceAddresses: []), loadSeconds: 20,
            results: results,
            broker: .init(
                pid: 1, rssBeforeKB: 1, rssConnectedKB: 2, rssAfterKB: 3, kbPerConnection: kb, cpuSeconds: 1, cpuCores: 0.1,
                cpuMicrosecondsPerDelivery: cpu, cpuMicrosecondsPerConnection: nil))
    }

    func testRatiosAreBrokerOverBaseline() throws {
        let comparison = try BenchComparison(broker: report(.broker, cpu: 170, p99: 1.0, kb: 36), baseline: report(.baseline, cpu: 10, p99: 0.5, kb: 6))
        XCTAssertEqual(comparison.ratios.cpuPerDelivery, 17)
        XCTAssertEqual(comparison.ratios.kbPerConnection, 6)
        XCTAssertEqual(try XCTUnwrap(comparison.ratios.latencyP99), 2, accuracy: 0.02)
        XCTAssertNil(comparison.ratios.connectionsPerSecond, "neither side has the figure")
        XCTAssertEqual(comparison.sizes, "200 pairs, 2000 positions/s, 20.0 s")
        XCTAssertTrue(comparison.summary.hasPrefix("CPU per delivery ×17.0"), comparison.summary)
    }

    func testAMissingOrZeroFigureGivesNoRatio() throws {
        let comparison = try BenchComparison(broker: report(.broker, cpu: 170, p99: nil, kb: 36), baseline: report(.baseline, cpu: nil, p99: 0.5, kb: 0))
        XCTAssertNil(comparison.ratios.cpuPerDelivery)
        XCTAssertNil(comparison.ratios.latencyP99)
        XCTAssertNil(comparison.ratios.kbPerConnection)
    }

    func testOnlyABrokerReportAndABaselineReportOfOneScenarioCompare() {
        XCTAssertThrowsError(try BenchComparison(broker: report(.baseline, cpu: 1, p99: 1, kb: 1), baseline: report(.baseline, cpu: 1, p99: 1, kb: 1)))
        XCTAssertThrowsError(try BenchComparison(broker: report(.broker, cpu: 1, p99: 1, kb: 1), baseline: report(.baseline, scenario: .fanout, cpu: 1, p99: 1, kb: 1)))
    }

    func testTheReportSaysWhichServerItMeasured() throws {
        let baseline = report(.baseline, cpu: 10, p99: 0.5, kb: 6)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: baseline.json()) as? [String: Any])
        XCTAssertEqual(object["target"] as? String, "baseline")
        XCTAssertTrue(baseline.text.hasPrefix("pairs (baseline server): "), baseline.text)
        XCTAssertTrue(baseline.text.contains("  server CPU "), baseline.text)

        var broker = report(.broker, cpu: 170, p99: 1.0, kb: 36)
        broker.baseline = try BenchComparison(broker: broker, baseline: baseline)
        let decoded = try JSONDecoder().decode(BenchReport.self, from: broker.json())
        XCTAssertEqual(decoded.target, .broker)
        XCTAssertEqual(decoded.baseline?.ratios.cpuPerDelivery, 17)
        XCTAssertTrue(broker.text.contains("  vs baseline  CPU per delivery ×17.0"), broker.text)
    }

    func testTheTableReplacesOnlyWhatLiesBetweenItsMarkers() throws {
        let comparison = try BenchComparison(broker: report(.broker, cpu: 170, p99: 1.0, kb: 36, lost: 2), baseline: report(.baseline, cpu: 10, p99: 0.5, kb: 6))
        let table = BenchComparison.table([comparison])
        XCTAssertTrue(table.contains("| pairs, 200 pairs, 2000 positions/s, 20.0 s | 170 / 10.0 / **×17.0** |"), table)
        XCTAssertTrue(table.hasSuffix("| 2 / 0 |"), table)
        let document = "# Title\n<!-- b -->\nold\n<!-- e -->\nafter\n"
        XCTAssertEqual(BenchComparison.replacingSection(of: document, begin: "<!-- b -->", end: "<!-- e -->", with: "new"), "# Title\n<!-- b -->\nnew\n<!-- e -->\nafter\n")
        XCTAssertNil(BenchComparison.replacingSection(of: document, begin: "<!-- e -->", end: "<!-- b -->", with: "new"))
    }

    func testBaselineConnectionsJoinTheirChannelThroughTheirPath() throws {
        XCTAssertEqual(BenchServer.baselinePath("/ws", channel: "bench-volunteer-0@bench-abc.example"), "/ws/bench-volunteer-0@bench-abc.example")
        var configuration = BenchConfiguration(
            scenario: .fanout, webSocketURL: "ws://127.0.0.1:9000/v1/ws", apiURL: "http://127.0.0.1:9000", backendKey: "", jwtSecret: "",
            area: try Fixtures.buenosAires())
        XCTAssertEqual(try configuration.target().path, "/v1/ws")
        configuration.server = .baseline
        XCTAssertEqual(try configuration.target().path, "/ws", "the broker's default path means nothing to the baseline")
    }
}
