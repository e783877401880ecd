import BrokerProtocol
import Foundation
import Logging
import ServiceLifecycle

@testable import LocationBroker

/// A real broker on a free port with its own SQLite file, as BrokerTests starts it.
final class LiveBroker: Sendable {
    let broker: Broker
    let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

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
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let broker = try await Broker.build(configuration: configuration, logger: logger) { port in
            portContinuation.yield(port)
        }
        let group = broker.serviceGroup(signals: [])
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw LiveBrokerError.didNotStart }
        return LiveBroker(broker: broker, port: port, group: group, task: task)
    }

    private init(broker: Broker, port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.broker = broker
        self.port = port
        self.group = group
        self.task = task
    }

    /// Shuts down as SIGTERM would, and waits until it has.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }

    var webSocketURL: String { "ws://127.0.0.1:\(port)/v1/ws" }
    var apiURL: String { "http://127.0.0.1:\(port)" }

    /// The value of one metric line of `/metrics`.
    func metric(_ series: String) -> Double? {
        for line in broker.metrics.exposition().split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}

enum LiveBrokerError: Error {
    case didNotStart
}
