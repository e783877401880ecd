import FleetSimulation
import Foundation
import XCTest

@testable import LoadDriver

/// The bench's latency second by second of send time: a tail spread over the run told apart from one that
/// comes in bursts.
final class LatencyTimelineTests: XCTestCase {
    /// Wall-clock microseconds at the start of a second well after the epoch.
    private let start: Int64 = 1_763_757_600_000_000

    /// `count` deliveries sent during second `second` of the run, each taking `latency` microseconds.
    private func send(_ count: Int, inSecond second: Int64, taking latency: Int64, into timeline: inout LatencyTimeline) {
        for index in 0..<Int64(count) {
            timeline.record(sentMicroseconds: start + second * 1_000_000 + index * (1_000_000 / Int64(count)), latencyMicroseconds: latency)
        }
    }

    func testDeliveriesCountInTheSecondTheyWereSentNotTheOneTheyArrived() {
        var timeline = LatencyTimeline()
        // Sent in the last microsecond of second 0, arriving 5 ms into second 1.
        timeline.record(sentMicroseconds: start + 999_999, latencyMicroseconds: 5_000)
        send(200, inSecond: 1, taking: 1_000, into: &timeline)
        let seconds = timeline.summary.seconds
        XCTAssertEqual(seconds.map(\.second), [0, 1])
        XCTAssertEqual(seconds.map(\.count), [1, 200])
        guard seconds.count == 2 else { return }
        XCTAssertEqual(seconds[0].p99, 5.0, accuracy: 0.05)
        XCTAssertEqual(seconds[1].p99, 1.0, accuracy: 0.01)
    }

    func testABurstSecondStandsOutFromTheMedianSecond() throws {
        var timeline = LatencyTimeline()
        for second in 0..<9 as Range<Int64> { send(1_000, inSecond: second, taking: 800, into: &timeline) }
        // Second 6: 5 % of its deliveries wait 20 ms, as when the machine runs something else for a moment.
        send(950, inSecond: 9, taking: 800, into: &timeline)
        send(50, inSecond: 9, taking: 20_000, into: &timeline)
        let bySecond = timeline.summary
        XCTAssertEqual(bySecond.seconds.count, 10)
        XCTAssertEqual(bySecond.medianP99, 0.8, accuracy: 0.01)
        XCTAssertEqual(bySecond.highestP99, 20.0, accuracy: 0.2)
        XCTAssertEqual(bySecond.highestSecond, 9)
        XCTAssertEqual(bySecond.burstSeconds, 1)
    }

    func testARunsRaggedLastSecondIsLeftOutOfTheFigures() {
        var timeline = LatencyTimeline()
        for second in 0..<3 as Range<Int64> { send(500, inSecond: second, taking: 700, into: &timeline) }
        send(5, inSecond: 3, taking: 40_000, into: &timeline)
        let bySecond = timeline.summary
        XCTAssertEqual(bySecond.seconds.count, 4, "every second is listed")
        XCTAssertEqual(bySecond.highestP99, 0.7, accuracy: 0.01, "but five deliveries make no second's p99")
        XCTAssertEqual(bySecond.burstSeconds, 0)
    }

    func testWorkersTimelinesMergeThroughJSONSecondBySecond() throws {
        var first = LatencyTimeline(), second = LatencyTimeline()
        send(300, inSecond: 0, taking: 1_000, into: &first)
        send(300, inSecond: 1, taking: 1_000, into: &first)
        // The other worker's deliveries of second 1 are slower, and one of second 0 arrives after them.
        send(300, inSecond: 1, taking: 3_000, into: &second)
        second.record(sentMicroseconds: start + 10, latencyMicroseconds: 2_000)
        var result = WorkerResult()
        result.latencyTimeline = second
        let line = try JSONEncoder().encode(WorkerMessage(kind: .result, worker: 1, result: result))
        let decoded = try XCTUnwrap(try JSONDecoder().decode(WorkerMessage.self, from: line).result)
        var merged = WorkerResult()
        merged.latencyTimeline = first
        merged.merge(decoded)
        let seconds = merged.latencyTimeline.summary.seconds
        XCTAssertEqual(seconds.map(\.count), [301, 600])
        guard seconds.count == 2 else { return }
        XCTAssertEqual(seconds[0].max, 2.0, accuracy: 0.02)
        XCTAssertEqual(seconds[1].p50, 1.0, accuracy: 0.01)
        XCTAssertEqual(seconds[1].p99, 3.0, accuracy: 0.03)
    }

    func testALongRunKeepsABoundedNumberOfSeconds() {
        var timeline = LatencyTimeline(maximumSeconds: 5)
        for second in 0..<8 as Range<Int64> { send(1, inSecond: second, taking: 1_000, into: &timeline) }
        // A second already kept still takes deliveries.
        send(1, inSecond: 2, taking: 1_000, into: &timeline)
        let seconds = timeline.summary.seconds
        XCTAssertEqual(seconds.count, 5)
        XCTAssertEqual(seconds.map(\.count).reduce(0, +), 6)
    }

    func testTheReportAndTheComparisonCarryTheMedianSecond() throws {
        var slow = LatencyTimeline(), quick = LatencyTimeline()
        for second in 0..<5 as Range<Int64> {
            send(200, inSecond: second, taking: 2_000, into: &slow)
            send(200, inSecond: second, taking: 1_000, into: &quick)
        }
        func report(_ target: BenchServer, _ timeline: LatencyTimeline) -> BenchReport {
            var results = BenchReport.Results()
            results.latency = LatencyHistogram().summary
            results.latencyBySecond = timeline.summary
            return BenchReport(
                target: target, startedAt: "2026-11-24T16:00:00Z", command: "tracker-sim bench", machine: .init(cores: 2, memoryGiB: 23.5, kernel: "6.1"),
                parameters: .init(scenario: .pairs, pairs: 200, rate: 1_000, duration: 5, procs: 2, sourceAddresses: []), loadSeconds: 5,
                results: results, broker: nil)
        }
        let broker = report(.broker, slow)
        XCTAssertTrue(broker.text.contains("by second    p99 median 2.00 ms, highest 2.00 ms (second 0); 0 of 5 seconds above twice the median"), broker.text)
        let comparison = try BenchComparison(broker: broker, baseline: report(.baseline, quick))
        XCTAssertEqual(try XCTUnwrap(comparison.ratios.latencyP99MedianSecond), 2, accuracy: 0.02)
        XCTAssertTrue(comparison.summary.contains("median second's p99 ×2"), comparison.summary)
    }
}
