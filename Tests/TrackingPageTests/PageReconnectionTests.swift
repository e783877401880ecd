import BrokerClient
import XCTest

@testable import TrackingPage

/// The page reconnects by the Swift library's rules: its script declares the library's backoff and hands it to the
/// JavaScript client, which draws full jitter.
final class PageReconnectionTests: XCTestCase {
    func testThePageReconnectsByTheLibrarysRules() {
        func seconds(_ duration: Duration) -> String {
            let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            return value == value.rounded() ? String(Int(value)) : String(value)
        }
        let policy = ConnectionStateMachine.Policy()
        XCTAssertTrue(TrackingPage.script.contains("const BACKOFF_INITIAL_S = \(seconds(policy.initialDelay));"))
        XCTAssertTrue(TrackingPage.script.contains("const BACKOFF_CAP_S = \(seconds(policy.maximumDelay));"))
        // The page reconnects through the JavaScript client, handing it those numbers; the client draws full jitter.
        XCTAssertTrue(TrackingPage.script.contains("backoffInitialMs: BACKOFF_INITIAL_S * 1000,"))
        XCTAssertTrue(TrackingPage.script.contains("backoffCapMs: BACKOFF_CAP_S * 1000,"))
        XCTAssertTrue(
            TrackingPage.Files.client.contains("backoffCeiling(attempt, n.backoffInitialMs, n.backoffCapMs) * this.random()"),
            "full jitter: from zero up to the ceiling")
    }
}
