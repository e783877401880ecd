import BrokerCore
import BrokerProtocol
import Logging
import NIOCore
import NIOWebSocket

/// Serves one upgraded WebSocket inside its channel pipeline, on its event loop: no task, no stream and no
/// actor per connection, so an idle donor costs little more than its socket, and a message is handled where it
/// is read.
///
/// The whole pipeline is NIO's frame encoder and this handler
/// (``addHandlers(to:messages:identity:maxMessageBytes:logger:closeGrace:)``): every read walks every handler, so
/// what could be handlers of their own (decoding frames, checking them, joining fragments) is done here. The
/// handler reads the socket's bytes itself (``ClientFrameReader``, with the rules of NIO's frame decoder, which
/// it replaces). Each frame the client sends shows it is there (the heartbeat's "client was heard", a fragment
/// included), then its ``ClientFrameAssembler`` takes it: masking (1002), fragments (1002) and the message size
/// (1009). Then this handler: UTF-8 (1007), pings, messages, and the close and heartbeat life, which
/// ``WebSocketConnectionStateMachine`` decides and this handler only performs. A frame whose header breaks the
/// decoder's rules (a fragmented or oversized control frame, an oversized frame) is answered as NIO's
/// `WebSocketProtocolErrorHandler` answers it (``answerDecoderError(_:context:)``), and nothing more is read.
///
/// Frames to the client, pongs and pings included, go through the connection's ``Outbox`` (its sink) and
/// ``SocketWriter``, so they are bounded like positions; only the echo of a client's close is written here.
/// Reading stops while the socket is not writable: a client that sends without reading is not read either,
/// so what it sends waits in its own socket buffers, not in the broker.
///
/// Memory: an idle connection is mostly this handler, its ``Outbox``, its ``SocketWriter`` and its
/// `ClientConnection`, so the handler keeps only references and small values; what it needs only to open the
/// connection (the identity, the logger) is dropped once the connection is open, and its heartbeat and close
/// grace are entries of its event loop's ``ConnectionTimers`` lists, carried inside the handler.
package final class WebSocketConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler, TimedConnection {
    package typealias InboundIn = ByteBuffer
    package typealias OutboundIn = WebSocketFrame
    package typealias OutboundOut = WebSocketFrame

    /// Pings a client may send at once, and per second after that; each ping beyond counts as an invalid
    /// frame against the identity's 4009 budget (docs/PROTOCOL.md).
    static let pingBurst = 10
    static let pingsPerSecond = 1.0
    /// Fragments one message may come in: each is kept until the last (1009 beyond).
    static let maxFragments = 64

    let messages: ClientMessageHandler
    // The fields each read touches are `@exclusivity(unchecked)` in release builds: every publish would otherwise
    // run the runtime's access check on them five times, a measurable cost on the hot path (docs/BENCHMARKS.md,
    // "Decisions that shaped the hot path"). Leaving it out is sound while two rules hold; keep them:
    // - Every access happens on the channel's event loop, in this handler's own methods: NIO's callbacks, the
    //   timers' ``timerExpired(_:)``, and the outbox's ``outboxCloseQueued()`` and ``outboxAborted()`` (both
    //   reached through a `NIOLoopBound`, which checks the loop in every build). Each entry point asserts the
    //   loop (debug builds only).
    // - No access to a field overlaps another access to the same field: none is passed `inout` to, or mutated
    //   across, a call that can come back into this handler. `reader.read` calls back for each frame while it
    //   mutates `reader`; handling a frame may touch every other field, never `reader`.
    // Debug builds declare the fields without the attribute (in the same places: the order sets the handler's
    // layout), so the runtime checks each access there and a test that made two overlap would trap.
    /// Reads the client's frames out of the socket's bytes; keeps the start of a frame split between reads.
    #if DEBUG
    private var reader = ClientFrameReader()
    #else
    @exclusivity(unchecked) private var reader = ClientFrameReader()
    #endif
    /// Takes every frame the client sends first: masked, joined.
    #if DEBUG
    private var assembler = ClientFrameAssembler()
    #else
    @exclusivity(unchecked) private var assembler = ClientFrameAssembler()
    #endif
    #if DEBUG
    var phase: Phase
    #else
    @exclusivity(unchecked) var phase: Phase
    #endif
    #if DEBUG
    var life: WebSocketConnectionStateMachine
    #else
    @exclusivity(unchecked) var life: WebSocketConnectionStateMachine
    #endif
    /// The client's pings beyond this budget are charged to its identity's refusal budget.
    private var pingBudget: TokenBucket
    var context: ChannelHandlerContext?
    /// Set while serving; its ``LoopDrains`` hold the loop's heartbeat and close-grace lists.
    #if DEBUG
    var writer: SocketWriter?
    #else
    @exclusivity(unchecked) var writer: SocketWriter?
    #endif
    /// The handler's place in its loop's heartbeat list while open, then in its close-grace list.
    package var timerLinks = TimerLinks<WebSocketConnectionHandler>()
    /// A read was asked for while the socket was not writable; it is done when the socket drains.
    private var readPending = false
    /// Whether a frame arrived since the heartbeat's ping was written (since the previous heartbeat when it was not).
    #if DEBUG
    var clientWasHeard = false
    #else
    @exclusivity(unchecked) var clientWasHeard = false
    #endif
    /// The longest message, all its fragments together (1009 beyond). 32 bits, beside the flags above, so that the
    /// handler stays in its allocator size class (`max_frame_bytes` is at most 1 MiB).
    private let maxMessageBytes: Int32

    /// Makes an upgraded socket's pipeline: NIO's frame encoder, then the broker's handler (and nothing else: this
    /// handler reads the client's frames itself).
    package static func addHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations, messages: ClientMessageHandler, identity: VerifiedIdentity, maxMessageBytes: Int,
        logger: Logger, closeGrace: TimeAmount = WebSocketConnectionStateMachine.closeGrace
    ) throws {
        try pipeline.addHandler(WebSocketFrameEncoder())
        try pipeline.addHandler(
            WebSocketConnectionHandler(
                messages: messages, identity: identity, maxMessageBytes: maxMessageBytes, closeGrace: closeGrace, logger: logger))
    }

    private init(messages: ClientMessageHandler, identity: VerifiedIdentity, maxMessageBytes: Int, closeGrace: TimeAmount, logger: Logger) {
        self.messages = messages
        self.phase = .opening(Opening(identity: identity, logger: logger))
        self.maxMessageBytes = Int32(clamping: maxMessageBytes)
        self.life = WebSocketConnectionStateMachine(grace: closeGrace)
        self.pingBudget = TokenBucket(rate: Self.pingsPerSecond, burst: Self.pingBurst, now: messages.clock.now())
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        context.eventLoop.assertInEventLoop()
        // The upgrade runs on an open socket; one that closed meanwhile never becomes a connection.
        guard context.channel.isActive, case .opening(let opening) = phase,
            let encoderContext = try? context.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
        else {
            context.close(promise: nil)
            return
        }
        self.context = context
        let hub = messages.hub
        let eventLoop = context.eventLoop
        let outbox = Outbox(limit: hub.settings.outboxBytes, stallLimit: hub.settings.slowConsumerStall)
        // From any thread: a close was queued (4008, 4001, 4009, 1001...), and the state machine starts the close
        // grace; or the broker gives up on the socket (the end of the shutdown grace), and it is cut at once.
        outbox.setOwner(NIOLoopBound(self, eventLoop: eventLoop))
        let connection = hub.connect(opening.identity, sink: outbox, logger: opening.logger)
        let drains = messages.loopDrains.drains(for: eventLoop)
        let writer = SocketWriter(channel: context.channel, encoderContext: encoderContext, loopDrains: drains)
        self.phase = .serving(connection, outbox)
        self.writer = writer
        connection.debug("websocket open")
        messages.welcome(connection)
        // The welcome is written now, behind the 101 the upgrade left unflushed, rather than in a task of the loop's
        // later: one write and one packet for both (``WebSocketUpgradeHandler``).
        drains.drainingWhenDone { outbox.attach(writer) }
        scheduleHeartbeat()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        context.eventLoop.assertInEventLoop()
        end()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        context.eventLoop.assertInEventLoop()
        end()
        context.fireChannelInactive()
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        context.eventLoop.assertInEventLoop()
        if context.channel.isWritable {
            if case .serving(_, let outbox) = phase { outbox.drain() }
            if readPending {
                readPending = false
                context.read()
            }
        }
        context.fireChannelWritabilityChanged()
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.eventLoop.assertInEventLoop()
        // The listener allows half-closure, so a client's FIN arrives here rather than as a closed socket.
        guard case ChannelEvent.inputClosed = event else { return context.fireUserInboundEventTriggered(event) }
        if life.isOpen { logger.debug("the client ended its input without a close frame") }
        perform(life.inputEnded())
    }

    package func read(context: ChannelHandlerContext) {
        // Backpressure on the client: while it does not take what the broker writes, nothing more is read from it.
        guard context.channel.isWritable else {
            readPending = true
            return
        }
        context.read()
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.eventLoop.assertInEventLoop()
        // The socket writer's control frames pass here on their way out (its data frames go below, straight to the
        // encoder's context). From the close frame on, the client's close answers it; from the heartbeat's ping on,
        // the client has a heartbeat to be heard.
        switch unwrapOutboundIn(data).opcode {
        case .connectionClose: perform(life.closeFrameWritten())
        case .ping: pingWritten()
        default: break
        }
        context.write(data, promise: promise)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.eventLoop.assertInEventLoop()
        // Frame errors (the reader's) are answered with a close frame and counted as invalid frames; anything else
        // (a reset, a TLS failure) leaves nothing to answer.
        if let error = error as? NIOWebSocketError {
            // Counted before it is answered: whoever reads the close frame then reads the count too.
            messages.metrics.frameRead(.invalid)
            answerDecoderError(error, context: context)
        }
        logger.debug("websocket error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    /// Answers a frame NIO's decoder could not read as NIO's `WebSocketProtocolErrorHandler` (no longer in the
    /// pipeline) answers it: a close frame with the code and no reason, written and flushed past this handler
    /// (it is not the close the state machine waits an answer to), then the socket closed once it is written.
    private func answerDecoderError(_ error: NIOWebSocketError, context: ChannelHandlerContext) {
        var data = context.channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: WebSocketViolation.closeCode(for: error))
        let closed = context.loopBound
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))).whenComplete { _ in
            closed.value.close(promise: nil)
        }
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.eventLoop.assertInEventLoop()
        do {
            try reader.read(unwrapInboundIn(data), maxFrameBytes: Int(maxMessageBytes)) { header, bytes in
                handle(header, in: bytes, context: context)
                // A frame can close the socket (a close echoed, a refusal): what follows it is not read.
                return self.context != nil
            }
        } catch {
            // A frame's header broke the frame rules (NIO's decoder's): answered as that decoder's errors were;
            // the reader reads nothing more.
            errorCaught(context: context, error: error)
        }
    }

    /// The frame whose header is `header`, whole at `bytes`' reader index.
    private func handle(_ header: ClientFrameHeader, in bytes: ByteBuffer, context: ChannelHandlerContext) {
        clientWasHeard = true
        guard case .serving(let connection, let outbox) = phase, let drains = writer?.loopDrains else { return }
        // What handling the frame queues on this loop (a donor's position, this client's answer) is written when
        // it is handled, not in a task after the loop's other reads (``LoopDrains``).
        drains.readBegan()
        defer { drains.readEnded() }
        // As nearly every message comes: one whole, masked text frame, with no message being joined. It is read
        // where it lies, unmasked into a scratch copy for the call (no `WebSocketFrame`, no slice).
        if header.firstByte == 0x81, let keyBytes = header.maskBytes, !assembler.isJoining {
            guard readsMessages(outbox) else { return }
            return bytes.withUnsafeReadableBytes { raw in
                WebSocketFrame.withUnmasked(UnsafeRawBufferPointer(rebasing: raw[header.headerBytes..<header.frameBytes]), keyBytes: keyBytes) { text in
                    handleText(text, from: connection)
                }
            }
        }
        let frame: WebSocketFrame
        switch assembler.take(header.frame(in: bytes), maxFragments: Self.maxFragments, maxBytes: Int(maxMessageBytes), allocator: context.channel.allocator) {
        case .frame(let whole): frame = whole
        case .kept: return
        case .violation(let violation): return refuse(violation)
        }
        switch frame.opcode {
        case .ping:
            if !pingBudget.take(now: messages.clock.now()) {
                messages.chargeInvalidFrame(from: connection, reason: "too many pings")
            }
            if life.isOpen { outbox.pushPong(frame.unmaskedData) }
        case .pong:
            break
        case .connectionClose:
            answerClose(frame, context: context, outbox: outbox)
        case .text, .binary:
            guard readsMessages(outbox) else { return }
            guard frame.opcode == .binary else {
                // Read where it is unmasked (a scratch copy for the call), not copied with the read buffer it shares.
                return frame.withUnmaskedPayload { text in handleText(text, from: connection) }
            }
            messages.refuseBinary(from: connection)
        case .continuation:
            // The assembler joins fragments; it lets no continuation through.
            refuse(.unexpectedContinuation)
        default:
            refuse(.unknownOpcode)
        }
    }

    /// Whether the client's messages are still read: not after a close is asked for (one queued from another
    /// thread is noted first).
    private func readsMessages(_ outbox: Outbox) -> Bool {
        noteQueuedClose(outbox)
        return life.isOpen
    }

    /// A whole text message, unmasked: UTF-8 (1007), then the message.
    private func handleText(_ text: UnsafeRawBufferPointer, from connection: ClientConnection) {
        guard text.isValidUTF8 else { return refuse(.notUTF8) }
        messages.handle(text: text, from: connection)
    }

    /// The client sent a close frame: either the answer to ours, or its own close, which is echoed. Then the
    /// socket is closed (the server closes TCP first, RFC 6455 §7.1.1).
    private func answerClose(_ frame: WebSocketFrame, context: ChannelHandlerContext, outbox: Outbox) {
        var data = frame.unmaskedData
        let code = data.readWebSocketErrorCode().map { UInt16(webSocketErrorCode: $0) }
        let action = life.clientCloseReceived(code: code)
        outbox.finish()
        switch action {
        case .echo(let code, let grace):
            if let grace { perform(.startGrace(grace)) }
            var echo = context.channel.allocator.buffer(capacity: 2)
            if let code { echo.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: Int(code))) }
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: echo))).whenComplete { _ in
                handler.value.perform(handler.value.life.echoWritten())
            }
        case .closeTCP:
            perform(.closeTCP)
        case .none:
            break
        }
    }

    /// Closes the connection for breaking the WebSocket protocol; the reason is sent in the close frame, and the
    /// frame is counted as invalid.
    private func refuse(_ violation: WebSocketViolation) {
        guard case .serving(let connection, let outbox) = phase else { return }
        messages.metrics.frameRead(.invalid)
        connection.debug("websocket protocol violation", metadata: ["reason": "\(violation.reason)"])
        outbox.close(code: violation.code, reason: violation.reason, discardPending: true)
        perform(life.brokerCloseQueued())
    }
}
