import BrokerHTTP
import BrokerProtocol
import BrokerWebSocket
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// Each accepted TCP connection: a WebSocket at `GET /v1/ws` when its upgrade is accepted, HTTP/1.1 for the API
/// otherwise.
///
/// The first handler (``WebSocketUpgradeHandler``) reads the request head itself and decides every upgrade: it
/// writes the 101 and installs the WebSocket handlers, or answers the refusal (401 with a JSON body that says what
/// is wrong with the token, 429, 503) and closes. Every other request goes to NIO's HTTP/1.1 pipeline, which
/// upgrades nothing, and to the main router.
///
/// ``BrokerListener`` runs ``setup(channel:logger:)`` for every accepted socket and ``handle(value:logger:)``, in a
/// task, only for the connections that stay HTTP.
package struct BrokerServerChannel: ServerChildChannel, HTTPChannelHandler {
    enum UpgradeResult: Sendable {
        /// The WebSocket is served by its pipeline
        /// (``WebSocketConnectionHandler/addHandlers(to:messages:identity:maxMessageBytes:logger:closeGrace:)``); nothing is left
        /// to do here.
        case webSocket
        /// The upgrade was refused and answered by the upgrade handler, which closes the socket.
        case refusedUpgrade
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    package struct Value: ServerChildChannelValue {
        let upgradeResult: EventLoopFuture<UpgradeResult>
        package let channel: any Channel
    }

    /// The WebSocket settings of every connection.
    package struct WebSocketSettings: Sendable {
        var maxFrameBytes: Int
        /// How long a new connection may take to send its first request.
        var handshakeTimeout: Duration = .seconds(10)
        /// How long each later request's head, and every request's body, may take (``RequestDeadlineHandler``).
        var requestDeadlines = RequestDeadlineHandler.Deadlines(body: .seconds(30), nextHead: .seconds(90))

        package init(
            maxFrameBytes: Int, handshakeTimeout: Duration = .seconds(10),
            requestDeadlines: RequestDeadlineHandler.Deadlines = .init(body: .seconds(30), nextHead: .seconds(90))
        ) {
            self.maxFrameBytes = maxFrameBytes
            self.handshakeTimeout = handshakeTimeout
            self.requestDeadlines = requestDeadlines
        }
    }

    /// The main router.
    package let responder: HTTPChannelHandler.Responder
    let http1: HTTP1Channel.Configuration
    let webSocket: WebSocketSettings
    /// Whether an upgrade request becomes a WebSocket (``WebSocketEndpoint/authorize(_:from:)``); called on the event
    /// loop.
    let authorize: @Sendable (HTTPRequest, SocketAddress?) -> UpgradeDecision
    /// The JSON body of the answer to a refused upgrade (``WebSocketEndpoint/answer(_:)``), which counts it.
    let refusalBody: @Sendable (UpgradeRefusal) -> ByteBuffer
    /// Handles the messages of every upgraded connection.
    let messages: ClientMessageHandler

    package init(
        responder: @escaping HTTPChannelHandler.Responder, http1: HTTP1Channel.Configuration, webSocket: WebSocketSettings,
        authorize: @escaping @Sendable (HTTPRequest, SocketAddress?) -> UpgradeDecision,
        refusalBody: @escaping @Sendable (UpgradeRefusal) -> ByteBuffer, messages: ClientMessageHandler
    ) {
        self.responder = responder
        self.http1 = http1
        self.webSocket = webSocket
        self.authorize = authorize
        self.refusalBody = refusalBody
        self.messages = messages
    }

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // NIO keeps each socket's last receive buffer for the next read, 2 KB by default: most of an idle
            // connection's memory. Clients send small frames (a position is ~150 bytes), so start small; the
            // allocator grows the buffer for bigger reads and shrinks it back.
            try channel.syncOptions?.setOption(
                ChannelOptions.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 256, maximum: 65_536))
            let result = channel.eventLoop.makePromise(of: UpgradeResult.self)
            let upgrade = WebSocketUpgradeHandler(
                authorize: { head in authorize(head.request, channel.remoteAddress) },
                installWebSocket: { [messages, webSocket] pipeline, identity in
                    try WebSocketConnectionHandler.addHandlers(
                        to: pipeline, messages: messages, identity: identity, maxMessageBytes: webSocket.maxFrameBytes, logger: logger)
                },
                installHTTP: { pipeline in result.succeed(.http(try configureHTTP(pipeline, channel: channel, logger: logger))) },
                refusalBody: refusalBody,
                decided: { outcome in
                    result.completeWith(outcome.map { $0 == .webSocket ? UpgradeResult.webSocket : .refusedUpgrade })
                })
            try channel.pipeline.syncOperations.addHandler(upgrade)
            // A client that opens a socket and says nothing (or too slowly) must not hold a file descriptor forever.
            let timeout = channel.eventLoop.scheduleTask(in: .init(webSocket.handshakeTimeout)) { channel.close(promise: nil) }
            result.futureResult.whenComplete { _ in timeout.cancel() }
            return Value(upgradeResult: result.futureResult, channel: channel)
        }
    }

    /// NIO's HTTP/1.1 pipeline, without an upgrader: the API, and the requests for `/v1/ws` that are not upgrades
    /// in the plain form (the route says why).
    private func configureHTTP(
        _ pipeline: ChannelPipeline.SynchronousOperations, channel: any Channel, logger: Logger
    ) throws -> NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart> {
        // A head NIO's parser refuses (obs-fold, a space before the colon, a NUL...) is answered 400 and closed at
        // once, rather than left waiting for the handshake timeout.
        try pipeline.configureHTTPServerPipeline(
            withPipeliningAssistance: false, withServerUpgrade: nil, withErrorHandling: true, withOutboundHeaderValidation: false)
        try pipeline.addHandler(ParserErrorCloser())
        // Before the HTTP handlers, which hold the end of input back until the request in flight is answered.
        try pipeline.addHandler(PeerClosure(), position: .first)
        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
        try pipeline.addHandler(RequestDeadlineHandler(deadlines: webSocket.requestDeadlines))
        try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: http1.idleTimeout.map { .init($0) }, logger: logger))
        return try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
    }

    package func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgradeResult.get() {
            case .http(let http1):
                await handleHTTP(asyncChannel: http1, logger: logger)
            case .webSocket, .refusedUpgrade:
                // Served by its pipeline, or answered and closing (BrokerListener hands neither to a task).
                break
            }
        } catch {
            logger.debug("connection ended with an error", metadata: ["error": "\(error)"])
        }
    }
}
