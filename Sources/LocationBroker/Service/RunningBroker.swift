import Logging
import ServiceLifecycle

/// A broker running inside this process, for embedding it and for tests: the port it listens on (useful with
/// port 0), and a stop that behaves like SIGTERM (drain, close 1001, return).
final class RunningBroker: Sendable {
    let broker: Broker
    let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(broker: Broker, port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.broker = broker
        self.port = port
        self.group = group
        self.task = task
    }

    /// Builds and starts a broker, and returns once it listens. Signals are left to the host process.
    static func start(configuration: BrokerConfiguration, logger: Logger) async throws -> RunningBroker {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let broker = try await Broker.build(configuration: configuration, logger: logger) { portContinuation.yield($0) }
        let group = broker.serviceGroup(signals: [])
        let task = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await task.value  // the group ended before listening: report why
            throw StartupError(description: "the broker stopped before it listened")
        }
        return RunningBroker(broker: broker, port: port, group: group, task: task)
    }

    /// Shuts down as SIGTERM would, and waits until it has.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}
