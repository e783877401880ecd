import BrokerCore
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The broker's listening socket: each accepted connection is set up by ``BrokerServerChannel`` on its event
/// loop, and one that becomes a WebSocket there is served by its pipeline alone, with no task. Only the
/// connections that stay HTTP (the API) get a task, in which Hummingbird's
/// HTTP/1.1 handling answers them.
///
/// Hummingbird's own server hands every accepted socket to a task through an async sequence before anything is
/// read from it: in a connect storm that task and the wake-ups between the event loops and the concurrency pool
/// take a large share of the broker's time (docs/BENCHMARKS.md, "Decisions that shaped the hot path"). Everything
/// else it does is kept: the
/// backlog, `SO_REUSEADDR`, half-closure, and the graceful shutdown (stop accepting, ask every connection to
/// finish, wait for the HTTP requests being answered; ``QuiescingHTTPConnections``).
package struct BrokerListener<Child: ServerChildChannel>: Service where Child.Value == BrokerServerChannel.Value {
    /// Sets up each accepted connection (TLS first when configured) and answers it when it stays HTTP.
    let child: Child
    let host: String
    /// 0 for a port of the system's choice (tests).
    let port: Int
    /// Connections the kernel holds until they are accepted.
    let backlog: Int
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    /// Called with the bound port once the socket listens.
    let onListening: @Sendable (Int) async -> Void

    package init(
        child: Child, host: String, port: Int, backlog: Int = 256, eventLoopGroup: any EventLoopGroup, logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void
    ) {
        self.child = child
        self.host = host
        self.port = port
        self.backlog = backlog
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.onListening = onListening
    }

    package func run() async throws {
        let httpOpen = QuiescingHTTPConnections()
        let (httpConnections, handOver) = AsyncStream.makeStream(of: BrokerServerChannel.Value.self)
        let server: any Channel
        do {
            server = try await ServerBootstrap(group: eventLoopGroup)
                .serverChannelOption(.backlog, value: Int32(backlog))
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.allowRemoteHalfClosure, value: true)
                .childChannelInitializer { [child, logger] channel in
                    child.setup(channel: channel, logger: logger).map { connection in
                        Self.route(connection, to: handOver, keptIn: httpOpen, logger: logger)
                    }
                }
                .bind(host: host, port: port).get()
        } catch {
            handOver.finish()
            throw error
        }
        server.closeFuture.whenComplete { _ in handOver.finish() }
        // Announced by the caller (`location-broker` logs `listening`).
        await onListening(server.localAddress?.port ?? port)
        await withTaskCancellationOrGracefulShutdownHandler {
            await withChildTasks { add, _ in
                for await connection in httpConnections {
                    add { [child, logger] in await child.handle(value: connection, logger: logger) }
                }
            }
        } onCancelOrGracefulShutdown: {
            // Closes the listening socket (which ends the loop above) and asks every HTTP connection to finish: it
            // closes after the response it is writing. The WebSockets were drained before this service is asked to
            // stop (ConnectionDrainService); a handshake still in progress is refused as draining, or times out.
            server.close(promise: nil)
            httpOpen.quiesce()
        }
    }

    /// Once the connection's first request is decided: a WebSocket is left to its pipeline; anything else is
    /// handed to the task group to be answered.
    private static func route(
        _ connection: BrokerServerChannel.Value, to handOver: AsyncStream<BrokerServerChannel.Value>.Continuation,
        keptIn httpOpen: QuiescingHTTPConnections, logger: Logger
    ) {
        connection.upgradeResult.whenComplete { result in
            switch result {
            case .success(.webSocket), .success(.refusedUpgrade):
                break
            case .success:
                httpOpen.add(connection.channel)
                // The listener stopped meanwhile: nobody will answer, so do not leave the client waiting.
                if case .terminated = handOver.yield(connection) { connection.channel.close(promise: nil) }
            case .failure(let error):
                logger.debug("connection ended with an error", metadata: ["error": "\(error)"])
            }
        }
    }
}
