import FleetSimulation
import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LoadDriver
@testable import LocationBroker

/// The bench against a real broker, briefly: pairs and a connect storm, every connection closed at the end.
final class LiveBenchTests: XCTestCase {
    /// A publish limit that the bench does not hit.
    private static func benchRates(_ configuration: inout BrokerConfiguration) {
        configuration.publishRate = 1_000
        configuration.publishBurst = 1_000
    }

    func testTheBenchMeasuresPairsAndAConnectStorm() async throws {
        let live = try await startBroker(Self.benchRates)
        func bench(_ scenario: BenchScenario) throws -> BenchConfiguration {
            var configuration = BenchConfiguration(
                scenario: scenario, webSocketURL: live.webSocketURL, apiURL: live.apiURL, backendKey: LiveBroker.backendKey,
                jwtSecret: LiveBroker.jwtSecret, area: try Fixtures.buenosAires())
            configuration.procs = 0
            configuration.pairs = 10
            configuration.rate = 100
            configuration.duration = 2
            configuration.connections = 50
            configuration.brokerPID = getpid()
            return configuration
        }
        let pairs = try await BenchCoordinator(configuration: try bench(.pairs)) { _ in }.run()
        XCTAssertTrue(pairs.passed, pairs.text)
        XCTAssertEqual(pairs.results.connections, 20)
        XCTAssertGreaterThan(pairs.results.published, 100)
        XCTAssertEqual(pairs.results.deliveries, pairs.results.expectedDeliveries)
        XCTAssertEqual(pairs.results.latency?.count, UInt64(pairs.results.deliveries))
        XCTAssertNotNil(pairs.broker?.cpuMicrosecondsPerDelivery)

        let storm = try await BenchCoordinator(configuration: try bench(.connect)) { _ in }.run()
        XCTAssertTrue(storm.passed, storm.text)
        XCTAssertEqual(storm.results.connections, 50)
        XCTAssertGreaterThan(storm.results.connectionsPerSecond ?? 0, 0)
        try await live.stop()
        XCTAssertEqual(live.metric("broker_connections"), 0, "the bench closed every connection")
    }
}
