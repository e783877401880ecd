import Foundation
import HummingbirdTesting
import NIOCore
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker
@testable import TrackingPage

/// The tracking page measures the trip by the numbers tracker-watch and the apps use (TrackingRules'
/// ``DonorViewRules``): the broker declares them at the top of the script it serves, once each. (That the page's
/// files keep no copies and the page follows whatever numbers it is given: PageSharedNumbersTests in
/// Tests/TrackingPageTests. The Swift side: WatchTests' DonorViewRulesTests and ClientTests'
/// DonorViewRulesClientTests.)
final class TrackingPageConstantsTests: XCTestCase {
    func testTheServedScriptDeclaresEachSharedNumberOnceFromDonorViewRules() async throws {
        let live = try await startBroker()
        let response = try await live.request(.get, TrackingPage.scriptPath)
        try await live.stop()
        let script = String(buffer: response.body ?? ByteBuffer())
        let declared = PageSharedNumbers.declarations(in: script)
        for (name, value) in PageSharedNumbers.expected {
            XCTAssertEqual(declared[name], [value], "\(name) is declared once, with DonorViewRules' value")
        }
        XCTAssertEqual(Set(TrackingPage.sharedNumbers.map(\.name)), Set(PageSharedNumbers.expected.keys), "the broker declares the shared numbers and no others")
    }
}
