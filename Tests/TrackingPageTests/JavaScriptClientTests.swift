import BrokerClient
import BrokerProtocol
import Foundation
import TrackingRules
import XCTest

@testable import BrokerTestSupport

/// The JavaScript client (clients/javascript/location-broker-client.js, which the tracking page imports and the
/// broker serves as `TrackingPage.Files.client`): its rules hold under node (its own tests, with a fake WebSocket and
/// a hand-moved clock), and its default numbers are the Swift library's, so that an app in JavaScript and one in
/// Swift come back after a broker restart the same way. In a real browser against a live broker:
/// Tests/BrowserTests/client_module_test.py (scripts/browser-test).
final class JavaScriptClientTests: XCTestCase {
    private let folder = BrokerProcess.packageRoot.appendingPathComponent("clients/javascript")

    func testTheClientsRulesHoldUnderNode() async throws {
        // The files by name: how `node --test` reads a folder differs between node versions.
        let tests = folder.appendingPathComponent("test")
        let files = try FileManager.default.contentsOfDirectory(atPath: tests.path).filter { $0.hasSuffix(".test.js") }.sorted()
        XCTAssertFalse(files.isEmpty, "the client has tests in \(tests.path)")
        let run = try await PageScriptTools.node(["--test"] + files.map { tests.appendingPathComponent($0).path })
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertTrue(run.output.contains("# fail 0"), run.output)
        let passed = run.output.split(separator: "\n").first { $0.hasPrefix("# pass ") }
        XCTAssertNotNil(passed, run.output)
        XCTAssertNotEqual(passed, "# pass 0", "the tests ran")
    }

    func testTheClientsDefaultsAreTheSwiftLibrarysNumbers() async throws {
        let module = folder.appendingPathComponent("location-broker-client.js").path
        let print = "import(process.argv[1]).then((m) => console.log(JSON.stringify(m.DEFAULTS)))"
        let run = try await PageScriptTools.node(["-e", print, module])
        XCTAssertEqual(run.status, 0, run.output)
        let line = run.output.split(separator: "\n").last.map(String.init) ?? ""
        let defaults = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Double], run.output)
        let policy = ConnectionStateMachine.Policy()
        let publisher = VolunteerPublisher.Options()
        let expected: [String: Int64] = [
            "backoffInitialMs": DonorViewRules.backoffInitialMilliseconds,
            "backoffCapMs": DonorViewRules.backoffCapMilliseconds,
            "backoffPatienceMs": DonorViewRules.backoffPatienceMilliseconds,
            "subscribeTimeoutMs": DonorViewRules.subscribeTimeoutMilliseconds,
            "notTrackableRetryMs": DonorViewRules.notTrackableRetryMilliseconds,
            "staleAfterMs": DonorViewRules.staleAfterMilliseconds,
            "assumedHeartbeatMs": policy.assumedHeartbeat.wholeMilliseconds,
            "openTimeoutMs": policy.openTimeout.wholeMilliseconds,
            "minimumAttemptGapMs": policy.minimumAttemptGap.wholeMilliseconds,
            "silenceBeforeReplacingMs": policy.silenceBeforeReplacing.wholeMilliseconds,
            "ackTimeoutMs": publisher.ackTimeout.wholeMilliseconds,
            "maximumFixAgeMs": publisher.maximumFixAge.wholeMilliseconds,
        ]
        for (name, value) in expected {
            XCTAssertEqual(defaults[name], Double(value), "\(name) is the Swift library's")
        }
    }
}

extension Duration {
    /// Whole milliseconds.
    fileprivate var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
