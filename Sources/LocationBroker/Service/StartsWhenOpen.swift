import BrokerCore
import ServiceLifecycle

/// Runs `service` only once `latch` opens: in a cluster the HTTP/WebSocket server starts once the node listens
/// to the other nodes, so no client is served a node that would miss what the others publish.
struct StartsWhenOpen: Service {
    let latch: Latch
    let service: any Service

    package func run() async throws {
        await cancelWhenGracefulShutdown { await latch.wait() }
        guard latch.isOpen, !Task.isCancelled else { return }
        try await service.run()
    }
}
