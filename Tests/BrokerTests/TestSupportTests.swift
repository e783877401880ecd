import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// The test support keeps its promises: a broker a test starts is stopped when the test fails. (A wait that would
/// never end fails, naming what it waited for: DeadlineTests in Tests/BrokerTestSupportTests.)
final class TestSupportTests: XCTestCase {
    private struct Deliberate: Error {}

    func testABrokerScopeStopsTheBrokerWhenTheBodyThrows() async throws {
        var port = 0
        do {
            try await withLiveBroker { live in
                port = live.port
                throw Deliberate()
            }
            XCTFail("the body's error was swallowed")
        } catch is Deliberate {}
        XCTAssertNotEqual(port, 0)
        let listening = try await Loopback.accepts(port: port)
        XCTAssertFalse(listening, "the broker on port \(port) still listens after its test failed")
    }

    func testStoppingABrokerTwiceIsHarmless() async throws {
        let live = try await LiveBroker.start()
        try await live.stop()
        try await live.stop()
        let listening = try await Loopback.accepts(port: live.port)
        XCTAssertFalse(listening)
    }

    func testABrokerProcessNobodyHoldsAnyMoreIsKilled() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("support-\(UUID().uuidString.prefix(8))")
        var broker: BrokerProcess? = try await BrokerProcess.start(database: folder.appendingPathComponent("broker.sqlite").path)
        let port = try XCTUnwrap(broker?.port)
        let process = try XCTUnwrap(broker?.process)
        broker = nil  // what a test that threw leaves behind
        try await waitUntil("the released broker process exited") { !process.isRunning }
        let listening = try await Loopback.accepts(port: port)
        XCTAssertFalse(listening)
    }
}
