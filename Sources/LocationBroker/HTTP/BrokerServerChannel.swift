import BrokerProtocol
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// Each accepted TCP connection: HTTP/1.1 for the API, upgraded to a WebSocket at `GET /v1/ws` when the
/// token is valid.
///
/// Hummingbird's own WebSocket channel answers a refused upgrade with an empty 400. The protocol promises a
/// 401 with a JSON body that says what is wrong with the token, so a refused upgrade is handed to the
/// main router instead, whose `GET /v1/ws` route explains the refusal.
///
/// The common case, a plain upgrade with a client token, never reaches NIO's HTTP pipeline: the first handler
/// (``WebSocketUpgradeHandler``) reads its head, writes the 101 and installs the WebSocket handlers on the event
/// loop (issue 17, the connect storm). Every other request goes to NIO's pipeline as before.
///
/// ``BrokerListener`` runs ``setup(channel:logger:)`` for every accepted socket and ``handle(value:logger:)``, in a
/// task, only for the connections that stay HTTP.
struct BrokerServerChannel: ServerChildChannel, HTTPChannelHandler {
    enum UpgradeResult: Sendable {
        /// The WebSocket is served by its pipeline
        /// (``WebSocketConnectionHandler/addHandlers(to:messages:identity:maxMessageBytes:logger:closeGrace:)``); nothing is left
        /// to do here.
        case webSocket
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// NIO has consumed the head of a refused upgrade request, so it is carried here to be answered, with the
        /// reason when the upgrade judged its token (`nil` for another path, which the answer says).
        case refusedUpgrade(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, HTTPRequest, WebSocketEndpoint.Refusal?)
    }

    struct Value: ServerChildChannelValue {
        let upgradeResult: EventLoopFuture<UpgradeResult>
        let channel: any Channel
    }

    /// The WebSocket settings of every connection.
    struct WebSocketSettings: Sendable {
        var maxFrameBytes: Int
        /// How long a new connection may take to send its first request.
        var handshakeTimeout: Duration = .seconds(10)
        /// How long each later request's head, and every request's body, may take (``RequestDeadlineHandler``).
        var requestDeadlines = RequestDeadlineHandler.Deadlines(body: .seconds(30), nextHead: .seconds(90))
    }

    /// The main router.
    let responder: HTTPChannelHandler.Responder
    let http1: HTTP1Channel.Configuration
    let webSocket: WebSocketSettings
    /// Whether an upgrade request becomes a WebSocket (``WebSocketEndpoint/authorize(_:)``); called on the event loop.
    let authorize: @Sendable (HTTPRequest, SocketAddress?) -> WebSocketEndpoint.Decision
    /// The answer to a refused upgrade (401 with a JSON body for a bad token, 404 for another path...), given the
    /// upgrade's own reason when it judged the token.
    let refuse: @Sendable (HTTPRequest, WebSocketEndpoint.Refusal?) async -> (HTTPResponse.Status, BrokerError)
    /// Handles the messages of every upgraded connection.
    let messages: ClientMessageHandler

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // NIO keeps each socket's last receive buffer for the next read, 2 KB by default: most of an idle
            // connection's memory. Clients send small frames (a position is ~150 bytes), so start small; the
            // allocator grows the buffer for bigger reads and shrinks it back.
            try channel.syncOptions?.setOption(
                ChannelOptions.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 256, maximum: 65_536))
            let result = channel.eventLoop.makePromise(of: UpgradeResult.self)
            // The hand-written upgrade's decision on the request it read. When it hands that same request to NIO's
            // path (a refused token, a watch link), the decision goes with it: a token is not judged twice.
            let handDecision = NIOLockedValueBox<WebSocketEndpoint.Decision?>(nil)
            // A plain upgrade with a client token is served by hand; anything else by NIO's HTTP pipeline, as before.
            let upgrade = WebSocketUpgradeHandler(
                authorize: { head in
                    let decision = authorize(head.request, channel.remoteAddress)
                    handDecision.withLockedValue { $0 = decision }
                    // Only a decision made now is taken here; a watch link's (it reads the store) is NIO's path.
                    guard case .now(.success(let identity)) = decision else { return nil }
                    return identity
                },
                installWebSocket: { [messages, webSocket] pipeline, identity in
                    try Self.addFrameEncoder(to: pipeline)
                    try WebSocketConnectionHandler.addHandlers(
                        to: pipeline, messages: messages, identity: identity, maxMessageBytes: webSocket.maxFrameBytes, logger: logger)
                },
                installHTTP: { _ in
                    try configureHTTP(channel: channel, decided: handDecision.withLockedValue { $0 }, logger: logger).cascade(to: result)
                },
                decided: { outcome in result.completeWith(outcome.map { .webSocket }) })
            try channel.pipeline.syncOperations.addHandler(upgrade)
            // A client that opens a socket and says nothing (or too slowly) must not hold a file descriptor forever.
            let timeout = channel.eventLoop.scheduleTask(in: .init(webSocket.handshakeTimeout)) { channel.close(promise: nil) }
            result.futureResult.whenComplete { _ in timeout.cancel() }
            return Value(upgradeResult: result.futureResult, channel: channel)
        }
    }

    /// What the broker's handler needs before it in an upgraded pipeline: NIO's frame encoder (the handler reads
    /// the client's frames itself, ``ClientFrameHeader``), for an upgrade made by hand.
    static func addFrameEncoder(to pipeline: ChannelPipeline.SynchronousOperations) throws {
        try pipeline.addHandler(WebSocketFrameEncoder())
    }

    /// NIO's HTTP/1.1 pipeline with its WebSocket upgrader: the API, refused upgrades, watch links, and every
    /// request the hand-written upgrade leaves alone.
    /// - Parameter decided: the hand-written upgrade's decision on the request it hands over, if it made one.
    private func configureHTTP(channel: any Channel, decided: WebSocketEndpoint.Decision?, logger: Logger) throws -> EventLoopFuture<UpgradeResult> {
        // Carries the identity from the upgrade decision to the upgraded pipeline of this channel.
        let upgradedIdentity = NIOLockedValueBox<VerifiedIdentity?>(nil)
        let refused = NIOLockedValueBox<(request: HTTPRequest, reason: WebSocketEndpoint.Refusal?)?>(nil)
        let upgrader = FrameReadingWebSocketUpgrader<UpgradeResult>(
            shouldUpgrade: { channel, head in
                guard let request = try? HTTPRequest(head, secure: false, splitCookie: false) else {
                    return channel.eventLoop.makeSucceededFuture(nil)
                }
                // Records the decision; a refusal hands the request, and its reason when judged, to the refusal path.
                @Sendable func decide(_ decision: Result<VerifiedIdentity, WebSocketEndpoint.Refusal>?) -> HTTPHeaders? {
                    guard case .success(let identity) = decision else {
                        let reason: WebSocketEndpoint.Refusal? = if case .failure(let reason) = decision { reason } else { nil }
                        refused.withLockedValue { $0 = (request, reason) }
                        return nil
                    }
                    upgradedIdentity.withLockedValue { $0 = identity }
                    return HTTPHeaders()
                }
                guard request.path?.split(separator: "?").first == "/v1/ws" else { return channel.eventLoop.makeSucceededFuture(decide(nil)) }
                switch decided ?? authorize(request, channel.remoteAddress) {
                case .now(let decision):
                    // A client token: decided here, on the event loop, without a task (issue 17's connect storm).
                    return channel.eventLoop.makeSucceededFuture(decide(decision))
                case .later(let check):
                    let promise = channel.eventLoop.makePromise(of: HTTPHeaders?.self)
                    promise.completeWithTask { decide(await check()) }
                    return promise.futureResult
                }
            },
            upgradePipelineHandler: { [messages, webSocket] channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    guard let identity = upgradedIdentity.withLockedValue({ $0 }) else { throw ChannelError.inappropriateOperationForState }
                    try WebSocketConnectionHandler.addHandlers(
                        to: channel.pipeline.syncOperations, messages: messages, identity: identity, maxMessageBytes: webSocket.maxFrameBytes,
                        logger: logger)
                    return UpgradeResult.webSocket
                }
            }
        )
        let upgradeConfiguration = NIOTypedHTTPServerUpgradeConfiguration(
            upgraders: [upgrader],
            notUpgradingCompletionHandler: { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                    try channel.pipeline.syncOperations.addHandler(RequestDeadlineHandler(deadlines: webSocket.requestDeadlines))
                    try channel.pipeline.syncOperations.addHandler(
                        HTTPConnectionStateHandler(idleTimeout: http1.idleTimeout.map { .init($0) }, logger: logger))
                    let asyncChannel = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                        wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                    if let refused = refused.withLockedValue({ $0 }) {
                        return UpgradeResult.refusedUpgrade(asyncChannel, refused.request, refused.reason)
                    }
                    return UpgradeResult.http(asyncChannel)
                }
            }
        )
        var configuration = NIOUpgradableHTTPServerPipelineConfiguration<UpgradeResult>(upgradeConfiguration: upgradeConfiguration)
        configuration.enablePipelining = false
        // A head NIO's parser refuses (obs-fold, a space before the colon, a NUL...) is answered 400 and closed at
        // once, rather than left waiting for the handshake timeout.
        configuration.enableErrorHandling = true
        configuration.enableResponseHeaderValidation = false
        let upgraded = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
        try channel.pipeline.syncOperations.addHandler(ParserErrorCloser())
        return upgraded
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgradeResult.get() {
            case .http(let http1):
                await handleHTTP(asyncChannel: http1, logger: logger)
            case .refusedUpgrade(let http1, let request, let reason):
                let (status, error) = await refuse(request, reason)
                let body = JSONResponse.errorBody(error)
                let head = HTTPResponse(
                    status: status,
                    headerFields: [
                        .contentType: "application/json; charset=utf-8", .contentLength: String(body.readableBytes), .connection: "close",
                    ])
                try await http1.executeThenClose { _, outbound in
                    try await outbound.write(contentsOf: [.head(head), .body(body), .end(nil)])
                }
            case .webSocket:
                // Served by its pipeline (BrokerListener does not hand WebSockets to a task).
                break
            }
        } catch {
            logger.debug("connection ended with an error", metadata: ["error": "\(error)"])
        }
    }
}
