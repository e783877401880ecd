import BrokerCore
import BrokerProtocol
import Logging
import NIOCore
import NIOWebSocket

/// Serves one upgraded WebSocket inside its channel pipeline, on its event loop: no task, no stream and no
/// actor per connection, so an idle donor costs little more than its socket, and a message is handled where it
/// is read.
///
/// It reassembles fragmented messages, checks UTF-8 (1007), masking and fragment rules (1002) and the message
/// size (1009), answers pings, pings the client every heartbeat (a client silent for a whole heartbeat after a
/// ping is closed with 1001 "Ping timeout"), and finishes close handshakes. Frame-level violations the NIO
/// decoder finds itself (a fragmented or oversized control frame, an oversized frame) are answered by NIO's
/// `WebSocketProtocolErrorHandler` before this handler.
///
/// Frames to the client, pongs and pings included, go through the connection's ``Outbox`` (its sink) and
/// ``SocketWriter``, so they are bounded like positions; only the echo of a client's close is written here.
/// Reading stops while the socket is not writable: a client that sends without reading is not read either,
/// so what it sends waits in its own socket buffers, not in the broker.
final class WebSocketConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// Pings a client may send at once, and per second after that; each ping beyond counts as an invalid
    /// frame against the 4009 budget (docs/PROTOCOL.md).
    static let pingBurst = 10
    static let pingsPerSecond = 1.0

    private let messages: ClientMessageHandler
    private let identity: VerifiedIdentity
    private let logger: Logger
    private let heartbeat: TimeAmount
    private var assembler: MessageAssembler
    private var errorBudget: TokenBucket
    private var connection: ClientConnection?
    /// The connection's sink: the hub writes to it, and so does this handler (pongs, pings, closes).
    private var outbox: Outbox?
    private var writer: SocketWriter?
    private var heartbeatTimer: Scheduled<Void>?
    /// Nothing has arrived from the client since the last ping.
    private var awaitingPong = false
    /// The client's pings beyond this budget are charged to `errorBudget`.
    private var pingBudget: TokenBucket
    /// A read was asked for while the socket was not writable; it is done when the socket drains.
    private var readPending = false

    init(messages: ClientMessageHandler, identity: VerifiedIdentity, maxMessageBytes: Int, logger: Logger) {
        self.messages = messages
        self.identity = identity
        self.logger = logger
        // The period the welcome frame announces, so the two cannot disagree.
        self.heartbeat = .seconds(Int64(messages.heartbeatSeconds))
        self.assembler = MessageAssembler(maxBytes: maxMessageBytes)
        self.errorBudget = messages.errorBudget()
        self.pingBudget = TokenBucket(rate: Self.pingsPerSecond, burst: Self.pingBurst, now: messages.clock.now())
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The upgrade runs on an open socket; one that closed meanwhile never becomes a connection.
        guard context.channel.isActive,
            let encoderContext = try? context.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
        else {
            context.close(promise: nil)
            return
        }
        let hub = messages.hub
        let outbox = Outbox(limit: hub.settings.outboxBytes, stallLimit: hub.settings.slowConsumerStall)
        let connection = hub.connect(identity, sink: outbox, logger: logger)
        let channel = context.channel
        outbox.setAbortHandler {
            // A client that does not read cannot receive the close frame: give it a moment, then cut the socket.
            channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
        }
        let writer = SocketWriter(
            channel: channel, encoderContext: encoderContext, metrics: messages.metrics, loopDrains: messages.loopDrains.drains(for: channel.eventLoop))
        self.connection = connection
        self.outbox = outbox
        self.writer = writer
        connection.logger.debug("websocket open")
        messages.welcome(connection)
        outbox.attach(writer)
        scheduleHeartbeat(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        end()
    }

    func channelInactive(context: ChannelHandlerContext) {
        end()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            outbox?.drain()
            if readPending {
                readPending = false
                context.read()
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        // Backpressure on the client: while it does not take what the broker writes, nothing more is read from it.
        guard context.channel.isWritable else {
            readPending = true
            return
        }
        context.read()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Protocol errors were answered with a close frame by NIO's error handler; anything else (a reset, a
        // TLS failure) leaves nothing to answer.
        (connection?.logger ?? logger).debug("websocket error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let connection, let outbox else { return }
        let frame = unwrapInboundIn(data)
        // Anything from the client shows it is there.
        awaitingPong = false
        switch frame.opcode {
        case .ping:
            if !pingBudget.take(now: messages.clock.now()) {
                messages.chargeInvalidFrame(from: connection, budget: &errorBudget, reason: "too many pings")
            }
            outbox.pushPong(frame.unmaskedData)
        case .pong:
            break
        case .connectionClose:
            answerClose(frame, context: context, outbox: outbox)
        case .text, .binary, .continuation:
            // After a close is asked for, the client's messages are no longer read.
            guard !outbox.isClosing else { return }
            guard frame.maskKey != nil else {
                return protocolViolation(.protocolError, "client frames must be masked", connection)
            }
            switch assembler.receive(frame) {
            case .failure(let failure):
                protocolViolation(failure.closeCode, failure.reason, connection)
            case .success(nil):
                break
            case .success(.text(let text)):
                guard text.readableBytesView.isValidUTF8 else {
                    return protocolViolation(.dataInconsistentWithMessage, "text message is not valid UTF-8", connection)
                }
                messages.handle(.text(text), from: connection, budget: &errorBudget)
            case .success(.binary(let binary)):
                messages.handle(.binary(binary), from: connection, budget: &errorBudget)
            }
        default:
            protocolViolation(.protocolError, "unknown opcode", connection)
        }
    }

    /// The client sent a close frame: either the answer to ours, or its own close, which is echoed. Then the
    /// socket is closed (the server closes TCP first, RFC 6455 §7.1.1).
    private func answerClose(_ frame: WebSocketFrame, context: ChannelHandlerContext, outbox: Outbox) {
        let ourCloseWasSent = outbox.isFinished
        outbox.finish()
        guard !ourCloseWasSent else {
            context.close(promise: nil)
            return
        }
        var data = frame.unmaskedData
        var echo = context.channel.allocator.buffer(capacity: 2)
        switch data.readWebSocketErrorCode() {
        case .some(let code) where Self.mayBeEchoed(code):
            echo.write(webSocketErrorCode: code)
        case .some:
            echo.write(webSocketErrorCode: .protocolError)
        case .none:
            // A close without a code is answered without one.
            break
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: echo))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    /// Codes a peer may send in a close frame (RFC 6455 §7.4, with 1012 to 1014 from the IANA registry).
    private static func mayBeEchoed(_ code: WebSocketErrorCode) -> Bool {
        let number = UInt16(webSocketErrorCode: code)
        switch number {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    /// Closes the connection for breaking the WebSocket protocol; the reason is sent in the close frame.
    private func protocolViolation(_ code: WebSocketErrorCode, _ reason: String, _ connection: ClientConnection) {
        connection.logger.debug("websocket protocol violation", metadata: ["reason": "\(reason)"])
        connection.sink.close(code: UInt16(webSocketErrorCode: code), reason: reason, discardPending: true)
    }

    private func scheduleHeartbeat(_ context: ChannelHandlerContext) {
        heartbeatTimer = context.eventLoop.assumeIsolated().scheduleTask(in: heartbeat) { [self] in
            heartbeatDue(context)
        }
    }

    private func heartbeatDue(_ context: ChannelHandlerContext) {
        guard let connection, let outbox, !outbox.isClosing else { return }
        if awaitingPong {
            connection.logger.debug("closing a websocket that did not answer a ping")
            outbox.close(code: CloseCode.goingAway, reason: "Ping timeout", discardPending: true)
            return
        }
        awaitingPong = true
        outbox.pushPing()
        scheduleHeartbeat(context)
    }

    /// Forgets the connection once: its subscriptions end and the hub counts it closed.
    private func end() {
        heartbeatTimer?.cancel()
        heartbeatTimer = nil
        guard let connection else { return }
        self.connection = nil
        writer = nil
        outbox?.finish()
        outbox = nil
        messages.hub.disconnect(connection)
        connection.logger.debug("websocket closed")
    }
}

extension ByteBufferView {
    /// Whether the bytes are valid UTF-8.
    var isValidUTF8: Bool {
        // The fast path: JSON from phones is almost always ASCII.
        if allSatisfy({ $0 < 0x80 }) { return true }
        return withContiguousStorageIfAvailable { String(validating: $0, as: UTF8.self) != nil }
            ?? (String(validating: Array(self), as: UTF8.self) != nil)
    }
}
