import BrokerProtocol
import FleetSimulation
import Foundation
import XCTest

@testable import LoadDriver

/// The bench's report and wire helpers: JSON shape, text, histograms, worker lines, /proc parsing.
final class ReportFormatTests: XCTestCase {
    private func sampleReport() -> BenchReport {
        var histogram = LatencyHistogram()
        for micros in [800, 900, 1_000, 1_100, 1_200, 5_000] as [Int64] { histogram.record(microseconds: micros) }
        var results = BenchReport.Results()
        results.connections = 400
        results.published = 4_000
        results.expectedDeliveries = 4_000
        results.deliveries = 4_000
        results.deliveriesPerSecond = 200
        results.latency = histogram.summary
        return BenchReport(
            startedAt: "2026-11-21T22:00:00Z", command: "tracker-sim bench --scenario pairs --pairs 200",
            machine: .init(cores: 2, memoryGiB: 23.5, kernel: "6.1"),
            parameters: .init(scenario: .pairs, pairs: 200, rate: 2_000, duration: 20, procs: 2, sourceAddresses: ["127.0.0.2", "127.0.0.3"]),
            loadSeconds: 20.4, results: results,
            broker: .init(
                pid: 42, rssBeforeKB: 60_000, rssConnectedKB: 64_000, rssAfterKB: 65_000, kbPerConnection: 10, cpuSeconds: 3,
                cpuCores: 0.15, cpuMicrosecondsPerDelivery: 750, cpuMicrosecondsPerConnection: nil))
    }

    func testTheReportRoundTripsAsJSONWithStableKeys() throws {
        let report = sampleReport()
        let data = try report.json()
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(Set(object.keys), ["broker", "command", "loadSeconds", "machine", "parameters", "results", "startedAt", "target", "tool"], "the baseline comparison is left out until bench-compare adds it")
        let results = try XCTUnwrap(object["results"] as? [String: Any])
        let latency = try XCTUnwrap(results["latency"] as? [String: Any])
        XCTAssertEqual(Set(latency.keys), ["count", "max", "mean", "p50", "p90", "p99", "p999"])
        let decoded = try JSONDecoder().decode(BenchReport.self, from: data)
        XCTAssertEqual(decoded.results.deliveries, 4_000)
        XCTAssertEqual(decoded.broker?.cpuMicrosecondsPerDelivery, 750)
        XCTAssertTrue(decoded.passed)
    }

    func testTheTextNamesEveryFigure() {
        let text = sampleReport().text
        XCTAssertTrue(text.hasPrefix("pairs: 200 pairs, 2000 positions/s, 20.0 s, 2 worker process(es), from 127.0.0.2, 127.0.0.3"), text)
        for needle in [
            "2 cores, 23.5 GiB", "400 ready, 0 failed", "4000 of 4000 expected, 200/s; lost 0", "latency      p50 1.00 ms",
            "10.0 KB per connection", "750 µs per delivery", "result       OK",
        ] {
            XCTAssertTrue(text.contains(needle), "missing \(needle) in\n\(text)")
        }
    }

    func testHistogramsMergeAcrossWorkersThroughJSON() throws {
        var first = LatencyHistogram(), second = LatencyHistogram()
        for micros in 1...1_000 as ClosedRange<Int64> { first.record(microseconds: micros) }
        for micros in 1_001...2_000 as ClosedRange<Int64> { second.record(microseconds: micros) }
        second.record(microseconds: -5)
        var result = WorkerResult()
        result.latency = second
        let line = try JSONEncoder().encode(WorkerMessage(kind: .result, worker: 1, result: result))
        XCTAssertFalse(line.contains(UInt8(ascii: "\n")), "one message is one line")
        let decoded = try JSONDecoder().decode(WorkerMessage.self, from: line)
        var merged = WorkerResult()
        merged.latency = first
        merged.merge(try XCTUnwrap(decoded.result))
        let summary = merged.latency.summary
        XCTAssertEqual(summary.count, 2_001)
        XCTAssertEqual(summary.p50, 1.0, accuracy: 0.002)
        XCTAssertEqual(summary.p99, 1.98, accuracy: 0.003)
        XCTAssertEqual(summary.max, 2.0, accuracy: 0.002)
        XCTAssertEqual(merged.latency.negative, 1)
    }

    func testPositionFramesAreScannedAsTheBrokerWritesThem() throws {
        let micros: Int64 = 1_763_757_670_123_437
        let stamp = LatencyStamp.stamp(micros)
        let position = Position(lat: -34.6037, lon: -58.3816, accuracy: stamp.accuracy, speed: 7.2, heading: 270, timestamp: stamp.timestamp)
        let bytes = PositionFrameEncoder.encode(channel: "bench-volunteer-1@bench-abc.example", seq: 1_763_757_600_000_042, position: position)
        let fields = try XCTUnwrap(ServerFrameScanner.position(bytes))
        XCTAssertEqual(fields.seq, 1_763_757_600_000_042)
        XCTAssertEqual(fields.timestamp, 1_763_757_670_123)
        XCTAssertEqual(LatencyStamp.microseconds(timestamp: fields.timestamp, accuracy: fields.accuracy), micros)
        let noAccuracy = PositionFrameEncoder.encode(channel: "v@x", seq: 7, position: Position(lat: 1, lon: 2, timestamp: 3))
        XCTAssertEqual(ServerFrameScanner.position(noAccuracy), .init(seq: 7, timestamp: 3, accuracy: nil))
        XCTAssertNil(ServerFrameScanner.position(Array(#"{"heartbeat":30,"identity":"d@x","type":"welcome"}"#.utf8)))
        XCTAssertNil(LatencyStamp.microseconds(timestamp: 3, accuracy: 12.5), "a real accuracy carries no send time")
    }

    func testProcFilesAreParsedEvenWithSpacesInTheCommandName() {
        let stat = "1234 (location broker) S 1 1234 1234 0 -1 4194560 5000 0 0 0 250 50 0 0 20 0 6 0 100 1000000 2000 18446744073709551615"
        XCTAssertEqual(ProcSampler.cpuTicks(stat: stat), 300)
        XCTAssertEqual(ProcSampler.residentKB(status: "Name:\tlocation-broker\nVmPeak:\t  90000 kB\nVmRSS:\t   65432 kB\n"), 65_432)
        let own = try? ProcSampler(pid: getpid()).sample()
        XCTAssertGreaterThan(own?.rssKB ?? 0, 1_000)
    }
}
