import BrokerCore
import BrokerHTTP
import BrokerServer
import BrokerWebSocket
import Hummingbird
import HummingbirdTLS
import Logging
import NIOPosix
import ServiceLifecycle

extension Broker {
    /// The server: HTTP/1.1 with the router, WebSocket upgrades decided by `endpoint` and served by `messages`,
    /// in TLS when the configuration names a certificate.
    static func listener(
        _ configuration: BrokerConfiguration, router: Router<BrokerRequestContext>, endpoint: WebSocketEndpoint, messages: ClientMessageHandler,
        logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void
    ) throws -> any Service {
        let webSocket = BrokerServerChannel.WebSocketSettings(
            maxFrameBytes: configuration.maxFrameBytes,
            handshakeTimeout: .seconds(Int64(configuration.handshakeTimeoutSeconds)),
            requestDeadlines: .init(
                body: .seconds(Int64(configuration.requestTimeoutSeconds)), nextHead: .seconds(Int64(3 * configuration.requestTimeoutSeconds))))
        let channel = BrokerServerChannel(
            responder: HTTPResponding.responder(router: router.buildResponder(), date: HTTPDate(), serverName: "location-broker", logger: logger),
            http1: .init(idleTimeout: .seconds(90)), webSocket: webSocket,
            authorize: { endpoint.authorize($0, from: $1) },
            refusalBody: { endpoint.answer($0) },
            messages: messages)
        if let tls = try TLSFiles.serverConfiguration(certificate: configuration.tlsCert, key: configuration.tlsKey) {
            return BrokerListener(
                child: try TLSChannel(channel, tlsConfiguration: tls), host: configuration.host, port: configuration.port,
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger, onListening: onServerRunning)
        }
        return BrokerListener(
            child: channel, host: configuration.host, port: configuration.port, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger,
            onListening: onServerRunning)
    }
}
