import BrokerProtocol
import Foundation
import Logging
import ServiceLifecycle

@testable import LocationBroker

/// A real broker on a free port with its own SQLite file, as BrokerTests starts it.
final class LiveBroker: Sendable {
    let running: RunningBroker

    static let jwtSecret = "sim-test-secret-0123456789-0123456789-abcdef"
    static let backendKey = "sim-test-backend-key-0123456789-0123456789"

    /// Starts a broker with the publish limit raised for simulated fleets.
    static func start(_ adjust: (inout BrokerConfiguration) -> Void = { _ in }) async throws -> LiveBroker {
        var configuration = BrokerConfiguration()
        configuration.port = 0
        configuration.database = FileManager.default.temporaryDirectory
            .appendingPathComponent("sim-test-\(UUID().uuidString)").appendingPathComponent("broker.sqlite").path
        configuration.jwtSecret = jwtSecret
        configuration.backendKey = backendKey
        configuration.shutdownGraceSeconds = 5
        configuration.publishRate = 1_000
        configuration.publishBurst = 1_000
        adjust(&configuration)
        var logger = Logger(label: "sim-test-broker")
        logger.logLevel = .warning
        return LiveBroker(running: try await RunningBroker.start(configuration: configuration, logger: logger))
    }

    private init(running: RunningBroker) {
        self.running = running
    }

    var broker: Broker { running.broker }
    var port: Int { running.port }
    var webSocketURL: String { "ws://127.0.0.1:\(port)/v1/ws" }
    var apiURL: String { "http://127.0.0.1:\(port)" }

    /// Shuts down as SIGTERM would, and waits until it has.
    func stop() async throws {
        try await running.stop()
    }

    /// The value of one metric line of `/metrics`.
    func metric(_ series: String) -> Double? {
        broker.metrics.value(of: series)
    }
}
