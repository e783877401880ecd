import XCTest

@testable import LocationBroker

/// `process_open_fds` and `process_max_fds`, as `/metrics` exports them beside the broker's own (that a live broker
/// exports what the alerts and the dashboard read: OperationsFilesTests in Tests/BrokerTests).
final class ProcessMetricsTests: XCTestCase {
    func testTheFileDescriptorGaugesSayHowCloseTheBrokerIsToItsLimit() async throws {
        let exposition = ProcessMetrics.exposition()
        let open = try XCTUnwrap(Self.value("process_open_fds", in: exposition))
        let limit = try XCTUnwrap(Self.value("process_max_fds", in: exposition))
        XCTAssertGreaterThan(open, 2, "at least standard input, output and error")
        XCTAssertGreaterThan(limit, open)
    }

    /// The value of the sample `name` in a Prometheus text exposition.
    private static func value(_ name: String, in exposition: String) -> Double? {
        exposition.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.dropFirst(name.count + 1)) }
    }
}
