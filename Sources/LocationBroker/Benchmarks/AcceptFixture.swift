import BrokerCore
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
@_spi(Benchmarks)
public final class AcceptFixture: Sendable {
    /// The identity the token names.
    public static let identity = BenchmarkScene.volunteer

    /// The bytes of the client's upgrade request, token included, as NIO's WebSocket client sends them.
    public let request: ByteBuffer

    private let endpoint: WebSocketEndpoint
    private let messages: ClientMessageHandler
    private let maxFrameBytes = BrokerConfiguration().maxFrameBytes
    private let logger = Logger(label: "benchmark")

    /// Builds the hub, the verifiers (a fixed HS256 secret, as ``TokenFixture``) and the request.
    public init() async throws {
        let tokens = try await TokenFixture()
        let metrics = BrokerMetrics()
        let scene = BenchmarkScene(donors: 1, metrics: metrics)
        messages = ClientMessageHandler(hub: scene.hub, metrics: metrics, clock: .system, heartbeatSeconds: 30)
        // Watch links are never presented here; their verifier is built only because the endpoint holds one.
        let watchLinks = await WatchTokenVerifier(backendKey: "microbenchmark-backend-key", ttlSeconds: 3_600) { _ in nil }
        endpoint = WebSocketEndpoint(verifier: tokens.verifier, watchLinks: watchLinks, metrics: metrics, hub: scene.hub, isDraining: { false })
        request = ByteBuffer(
            string: "GET /v1/ws HTTP/1.1\r\nHost: localhost:8080\r\nUpgrade: websocket\r\nConnection: upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nContent-Length: 0\r\n"
                + "Authorization: Bearer \(tokens.token)\r\n\r\n")
    }

    /// Adds the first handler of an accepted socket, as ``BrokerServerChannel``'s set-up does for a plain upgrade;
    /// anything the hand-written path would hand to NIO's HTTP pipeline fails the connection instead (the fixture's
    /// request never is).
    public func accept(on pipeline: ChannelPipeline.SynchronousOperations) throws {
        let upgrade = WebSocketUpgradeHandler(
            authorize: { [endpoint] head in
                guard case .now(let identity) = endpoint.authorize(head.request) else { return nil }
                return identity
            },
            installWebSocket: { [messages, maxFrameBytes, logger] pipeline, identity in
                try BrokerServerChannel.addWebSocketCodec(to: pipeline, maxFrameBytes: maxFrameBytes)
                try WebSocketConnectionHandler.addHandlers(
                    to: pipeline, messages: messages, identity: identity, maxMessageBytes: maxFrameBytes, logger: logger)
            },
            installHTTP: { _ in throw FixtureError(description: "the upgrade request was handed to NIO's HTTP pipeline") },
            decided: { _ in })
        try pipeline.addHandler(upgrade)
    }

    /// How many connections the hub counts open.
    public var openConnections: Int { messages.hub.connectionCount }
}
