import BrokerProtocol
import FleetSimulation
import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// Short runs against a real broker: a small fleet at high speedup, with and without chaos.
final class LiveFleetTests: XCTestCase {
    private final class Lines: Sendable {
        let all = NIOLockedValueBox<[String]>([])
        var output: FleetOutput {
            FleetOutput(line: { line in self.all.withLockedValue { $0.append(line) } }, status: { _ in }, isLive: false)
        }
    }

    /// A publish limit that simulated fleets do not hit.
    private static func fleetRates(_ configuration: inout BrokerConfiguration) {
        configuration.publishRate = 1_000
        configuration.publishBurst = 1_000
    }

    private func fleet(_ live: LiveBroker, volunteers: Int, chaos: Bool) throws -> FleetConfiguration {
        var configuration = FleetConfiguration(
            webSocketURL: live.webSocketURL, apiURL: live.apiURL, backendKey: LiveBroker.backendKey, jwtSecret: LiveBroker.jwtSecret,
            volunteers: volunteers, area: try Fixtures.buenosAires())
        configuration.speedup = 400
        configuration.rounds = 2
        configuration.duration = 60
        configuration.seed = 2026
        configuration.chaos = chaos
        return configuration
    }

    func testASmallFleetDeliversWithNothingLostOrMisplaced() async throws {
        let live = try await startBroker(Self.fleetRates)
        let lines = Lines()
        let summary = try await FleetRunner(configuration: try fleet(live, volunteers: 3, chaos: false), output: lines.output).run()
        try await live.stop()
        XCTAssertTrue(summary.passed, summary.text)
        XCTAssertEqual(summary.stats.created, 6, "two rounds of three volunteers")
        XCTAssertGreaterThanOrEqual(summary.stats.delivered, 1, "the showcase donation is delivered")
        XCTAssertEqual(summary.stats.delivered + summary.stats.cancelled + summary.stats.deleted, 6, summary.text)
        XCTAssertGreaterThan(summary.stats.deliveries, 20)
        XCTAssertGreaterThanOrEqual(summary.stats.arrivals, 2, "home and institution of the showcase")
        XCTAssertGreaterThan(summary.stats.latency.count, 0)
        let watch = lines.all.withLockedValue { $0 }.first { $0.hasPrefix("Watch a donation live: tracker-watch --broker ws://127.0.0.1:") }
        XCTAssertNotNil(watch, "the ready tracker-watch command is printed")
        XCTAssertTrue(watch?.contains("--donation fleet-") ?? false)
    }

    func testDonorsRecoverWithSinceUnderChaos() async throws {
        let live = try await startBroker(Self.fleetRates)
        var configuration = try fleet(live, volunteers: 4, chaos: true)
        configuration.speedup = 150
        configuration.rounds = 1
        configuration.showcase = false
        let summary = try await FleetRunner(configuration: configuration, output: Lines().output).run()
        try await live.stop()
        XCTAssertTrue(summary.passed, summary.text)
        XCTAssertGreaterThan(summary.stats.reconnects, 0, "connections were dropped")
    }

    func testTheFleetSaysSoWhenTheBrokerRateLimitsIt() async throws {
        let live = try await startBroker { $0.publishRate = 1; $0.publishBurst = 1 }
        let lines = Lines()
        var configuration = try fleet(live, volunteers: 1, chaos: false)
        configuration.rounds = 1
        configuration.duration = 3
        let summary = try await FleetRunner(configuration: configuration, output: lines.output).run()
        try await live.stop()
        XCTAssertFalse(summary.passed)
        XCTAssertGreaterThan(summary.stats.rateLimited, 0)
        let all = lines.all.withLockedValue { $0 }
        XCTAssertTrue(all.contains { $0.hasPrefix("Note: each volunteer publishes") && $0.contains("LOCATION_BROKER_PUBLISH_RATE=") })
        XCTAssertTrue(all.contains { $0.hasPrefix("ERROR: the broker rate-limits the volunteers") && $0.contains("LOCATION_BROKER_PUBLISH_BURST=") })
    }
}
