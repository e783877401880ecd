import BrokerProtocol
import Foundation
import TrackingRules
import XCTest

@testable import BrokerTestSupport
@testable import TrackingPage

/// The tracking page measures the trip by the numbers tracker-watch and the apps use (TrackingRules'
/// ``DonorViewRules``): the page's files keep no copies of them, and the page, run under node, follows whatever
/// numbers it is given. (That the served script declares them once: TrackingPageConstantsTests, against a live
/// broker. The Swift side: WatchTests' DonorViewRulesTests and ClientTests' DonorViewRulesClientTests.)
final class PageSharedNumbersTests: XCTestCase {
    func testThePageFilesKeepNoCopiesOfTheSharedNumbers() throws {
        // Values no other rule of the page uses: a literal of one of them is a copy (the old page had every one).
        let distinctive = ["60000", "60_000", "10000", "15000", "600000", "6371008.8", "0.3", "70"]
        for file in TrackingPage.Files.scripts {
            let declared = PageSharedNumbers.declarations(in: file.text)
            for name in PageSharedNumbers.expected.keys {
                XCTAssertNil(declared[name], "\(file.name) declares \(name): it must come from the broker")
                for keyword in ["let", "var", "function"] {
                    XCTAssertFalse(file.text.contains("\(keyword) \(name)"), "\(file.name) redefines \(name)")
                }
            }
            for (number, line) in file.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().flatMap({ index, line in
                distinctive.filter { literal(line, contains: $0) }.map { ($0, index + 1) }
            }) {
                XCTFail("\(file.name):\(line) has the literal \(number), a copy of a shared number")
            }
        }
    }

    /// Whether `line` has `number` as a number of its own (not inside a longer number or a name).
    private func literal(_ line: Substring, contains number: String) -> Bool {
        var rest = line[...]
        while let range = rest.range(of: number) {
            let before = rest[..<range.lowerBound].last
            let after = rest[range.upperBound...].first
            let partOfMore: (Character?) -> Bool = { $0.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." } ?? false }
            if !partOfMore(before), !partOfMore(after) { return true }
            rest = rest[range.upperBound...]
        }
        return false
    }

    /// Runs the served script, with `numbers` declared instead of the shared ones, in Tests/BrowserTests/page_under_node.js.
    private func runUnderNode(_ numbers: [(name: String, value: Double)]) async throws -> [String: Any] {
        let script = TrackingPage.script.replacingOccurrences(of: TrackingPage.constants, with: TrackingPage.declarations(numbers))
        XCTAssertTrue(script.contains(TrackingPage.declarations(numbers)))
        let written = try PageScriptTools.write(script, named: "tracking-page.js")
        defer { try? FileManager.default.removeItem(at: written.folder) }
        let harness = BrokerProcess.packageRoot.appendingPathComponent("Tests/BrowserTests/page_under_node.js").path
        let run = try await PageScriptTools.node(["--experimental-vm-modules", "--no-warnings", harness, written.file.path])
        XCTAssertEqual(run.status, 0, run.output)
        let line = run.output.split(separator: "\n").last.map(String.init) ?? ""
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], run.output)
    }

    func testThePageBehavesByTheSharedNumbers() async throws {
        let seen = try await runUnderNode(TrackingPage.sharedNumbers)
        XCTAssertEqual(seen["subscribeTimeoutMs"] as? Double, Double(DonorViewRules.subscribeTimeoutMilliseconds))
        let ceilings = (1...8).map {
            min(DonorViewRules.backoffCapMilliseconds, DonorViewRules.backoffInitialMilliseconds << ($0 - 1))
        }
        XCTAssertEqual(seen["retryDelaysMs"] as? [Double], ceilings.map(Double.init), "full jitter's ceilings, doubling to the cap")
        XCTAssertEqual(seen["patienceDelayMs"] as? Double, Double(DonorViewRules.backoffPatienceMilliseconds))
        let stale = try XCTUnwrap(seen["staleAfterMs"] as? Double, "the fix became stale")
        XCTAssertGreaterThan(stale, Double(DonorViewRules.staleAfterMilliseconds))
        XCTAssertLessThanOrEqual(stale, Double(DonorViewRules.staleAfterMilliseconds + 1000), "within the page's one-second tick")
        XCTAssertEqual(seen["staleEvent"] as? Bool, true)
        XCTAssertEqual(seen["distance"] as? String, "920 m", "1 km north, after four fixes 20 m apart")
        XCTAssertEqual(seen["heading"] as? String, "north (0°)")
        XCTAssertEqual(seen["eta"] as? String, "2 min", "920 m at 10 m/s")
    }

    /// The attack on "one place": a page that kept its own copies would not change with the numbers it is given.
    func testThePageFollowsChangedNumbersSoItKeepsNoCopies() async throws {
        let changed: [String: Double] = [
            "STALE_AFTER_MS": 7000, "SUBSCRIBE_TIMEOUT_MS": 3000, "BACKOFF_INITIAL_S": 0.25, "BACKOFF_CAP_S": 3,
            "BACKOFF_PATIENCE_S": 2, "EARTH_RADIUS": Geodesy.earthRadius * 2, "MIN_COURSE_DISTANCE": 100,
            "MAX_PLAUSIBLE_SPEED": 5,
        ]
        let seen = try await runUnderNode(TrackingPage.sharedNumbers.map { ($0.name, changed[$0.name] ?? $0.value) })
        XCTAssertEqual(seen["subscribeTimeoutMs"] as? Double, 3000)
        XCTAssertEqual(seen["retryDelaysMs"] as? [Double], [250, 500, 1000, 2000, 3000, 3000, 3000, 3000])
        XCTAssertEqual(seen["patienceDelayMs"] as? Double, 2000)
        let stale = try XCTUnwrap(seen["staleAfterMs"] as? Double)
        XCTAssertTrue(stale > 7000 && stale <= 8000, "stale after 7 s, seen after \(stale) ms")
        XCTAssertEqual(seen["distance"] as? String, "1.8 km", "twice the radius, twice the distance")
        XCTAssertEqual(seen["heading"] as? String, "\u{2014}", "fixes 40 m apart are closer than a course distance of 100 m")
        XCTAssertEqual(seen["eta"] as? String, "\u{2014}", "20 m/s is over a plausible speed of 5 m/s: no speed, no ETA")
    }
}
