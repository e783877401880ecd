import BrokerAuth
import BrokerCore
import BrokerProtocol
import BrokerServer
import BrokerWebSocket
import LocationBroker
import Logging
import NIOCore
import NIOWebSocket

/// One connection's acceptance in process, for counting a connect storm's share on the broker's side: the
/// child channel's set-up as ``BrokerServerChannel`` makes it for a client's plain upgrade (the hand-written
/// ``WebSocketUpgradeHandler``, its head parse, the real ``WebSocketEndpoint/authorize(_:)`` with a real
/// ``TokenVerifier`` on the microbenchmark's HS256 token, the 101, the WebSocket handlers and the welcome), then
/// the connection's close. Exists only for Benchmarks/HotPath; not part of the broker's API.
///
/// The caller makes each channel (say an `EmbeddedChannel`, connected, with a handler at the bottom that drops
/// what reaches the socket), calls ``accept(on:)``, writes ``request`` in, runs the loop and closes the channel.
/// Not counted: the listener's accept and its routing of the decided connection (a future's callback).

public final class AcceptFixture: Sendable {
    /// The identity the token names.
    public static let identity = BenchmarkScene.volunteer

    /// The bytes of the client's upgrade request, token included, as NIO's WebSocket client sends them.
    public let request: ByteBuffer

    private let messages: ClientMessageHandler
    private let server: BrokerServerChannel
    private let logger = Logger(label: "benchmark")

    /// Builds the hub, the verifiers (a fixed HS256 secret, as ``TokenFixture``) and the request.
    public init() async throws {
        let tokens = try await TokenFixture()
        let metrics = BrokerMetrics()
        let scene = BenchmarkScene(donors: 1, metrics: metrics)
        messages = ClientMessageHandler(hub: scene.hub, metrics: metrics, clock: .system, heartbeatSeconds: 30)
        // Watch links are never presented here; their verifier is built only because the endpoint holds one.
        let watchLinks = await WatchTokenVerifier(backendKey: "microbenchmark-backend-key", ttlSeconds: 3_600) { _ in nil }
        let endpoint = WebSocketEndpoint(verifier: tokens.verifier, watchLinks: watchLinks, metrics: metrics, hub: scene.hub, isDraining: { false })
        server = BrokerServerChannel(
            responder: { _, _, _ in throw FixtureError(description: "an accepted connection was answered as HTTP") },
            http1: .init(), webSocket: .init(maxFrameBytes: BrokerConfiguration.defaults.maxFrameBytes),
            authorize: { endpoint.authorize($0, from: $1) },
            refusalBody: { endpoint.answer($0) },
            messages: messages)
        request = ByteBuffer(
            string: "GET /v1/ws HTTP/1.1\r\nHost: localhost:8080\r\nUpgrade: websocket\r\nConnection: upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nContent-Length: 0\r\n"
                + "Authorization: Bearer \(tokens.token)\r\n\r\n")
    }

    /// Sets up an accepted socket with the broker's own ``BrokerServerChannel/setup(channel:logger:)``, as the
    /// listener does (its receive buffer, the hand-written upgrade's handler, the handshake timeout); a request the
    /// upgrade handler would hand to the HTTP pipeline is answered by nobody here (the fixture's never is).
    public func accept(on channel: any Channel) {
        _ = server.setup(channel: channel, logger: logger)
    }

    /// How many connections the hub counts open.
    public var openConnections: Int { messages.hub.connectionCount }
}
