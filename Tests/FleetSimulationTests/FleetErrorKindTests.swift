import XCTest

@testable import FleetSimulation

/// A long fleet run says what its errors were: each is counted under a kind that leaves out which donation or
/// volunteer it happened to, so thousands of one cause read as one line.
final class FleetErrorKindTests: XCTestCase {
    func testAnErrorsKindLeavesOutWhoItHappenedToAndItsNumbers() {
        XCTAssertEqual(
            FleetStats.kind(of: "donor of fleet-a1-7-2: connection failed: the connection is not open"),
            "donor: connection failed: the connection is not open")
        XCTAssertEqual(
            FleetStats.kind(of: "donor of fleet-b2-1-9: the broker closed the connection (4009 too many invalid frames)"),
            "donor: the broker closed the connection (# too many invalid frames)")
        XCTAssertEqual(FleetStats.kind(of: "volunteer 17: no ack for publish p-3"), "volunteer: no ack for publish p-#")
        XCTAssertEqual(FleetStats.kind(of: "volunteer 3 cannot connect: refused"), "volunteer cannot connect: refused")
        XCTAssertEqual(FleetStats.kind(of: "PUT fleet-x-1-1 DELIVERED: 409"), "PUT DELIVERED: #")
    }

    func testTheSummaryCountsEachKind() {
        let stats = FleetStats()
        for donation in 1...3 { stats.error("donor of fleet-z-\(donation)-1: connection failed: reset") }
        stats.error("volunteer 2: no ack for publish p-9")
        let summary = FleetSummary(runID: "z", seconds: 1, volunteers: 2, stats: stats.snapshot(), errors: stats.errorMessages)
        XCTAssertTrue(summary.text.contains("    3 x donor: connection failed: reset\n    1 x volunteer: no ack for publish p-#"), summary.text)
        XCTAssertFalse(summary.passed)
    }
}
