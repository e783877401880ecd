import BrokerCore
import NIOCore

/// The one way a socket becomes a WebSocket. The first handler of every accepted socket reads the request head
/// itself; an upgrade request for `/v1/ws` in the plain form (``UpgradeRequestHead``) is decided here, on the
/// socket's event loop:
/// - accepted: the 101 is written and the WebSocket handlers installed, and any bytes the client sent after the
///   head (its first frames) go to them;
/// - refused: the status and its JSON body are written, then the socket is closed;
/// - waiting for a check that suspends (a watch link's reads the store): bytes that arrive meanwhile are kept,
///   up to ``maximumEarlyBytes``, and the socket is decided when the check returns.
///
/// A request for `/v1/ws` that asks for an upgrade not in the plain form, or whose head is longer than
/// ``UpgradeRequestHead/maximumBytes``, is refused here too (400 with the rule it breaks, 431), and nothing after
/// its head is read. Every other request (another path, a `GET /v1/ws` without `Upgrade`) goes to the HTTP
/// pipeline, with every byte read so far fired again into it, where nothing upgrades. Reading the head by hand,
/// without NIO's HTTP reader, its upgrade handler and the futures that remove them, is about half of a connect
/// storm's time.
package final class WebSocketUpgradeHandler: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    /// How a connection's first request ended in this handler.
    package enum Outcome: Equatable, Sendable {
        /// The socket is a WebSocket, served by its handlers.
        case webSocket
        /// The upgrade was refused and answered; the socket is closing.
        case refused
    }

    /// The most a client may send after its head while the decision waits for a check: a few frames, not a flood.
    static let maximumEarlyBytes = 65_536

    private enum State {
        case readingHead
        /// The head (`length` bytes at the front of `buffered`) waits for a check that suspends.
        case waiting(UpgradeRequestHead, length: Int)
        case decided
    }

    /// Whether an upgrade request in the plain form becomes a WebSocket.
    private let authorize: (UpgradeRequestHead) -> UpgradeDecision
    /// Installs the WebSocket handlers after this one.
    private let installWebSocket: (ChannelPipeline.SynchronousOperations, VerifiedIdentity) throws -> Void
    /// Installs the HTTP pipeline after this one; what was read so far is fired into it next.
    private let installHTTP: (ChannelPipeline.SynchronousOperations) throws -> Void
    /// The JSON body of a refusal's answer (asked once per refusal, which it counts).
    private let refusalBody: (UpgradeRefusal) -> ByteBuffer
    /// Told once when the socket was decided here, or closed or failed before anything was decided; not told when
    /// the request was handed to the HTTP pipeline.
    private let decided: (Result<Outcome, any Error>) -> Void
    private var state = State.readingHead
    private var buffered: ByteBuffer?
    /// How many buffered bytes are known to hold no end of head (a head sent byte by byte is scanned once).
    private var scanned = 0
    /// Whether `buffered` is a copy of this handler's, rather than the receive buffer NIO handed over.
    private var ownsBuffered = false

    package init(
        authorize: @escaping (UpgradeRequestHead) -> UpgradeDecision,
        installWebSocket: @escaping (ChannelPipeline.SynchronousOperations, VerifiedIdentity) throws -> Void,
        installHTTP: @escaping (ChannelPipeline.SynchronousOperations) throws -> Void,
        refusalBody: @escaping (UpgradeRefusal) -> ByteBuffer,
        decided: @escaping (Result<Outcome, any Error>) -> Void
    ) {
        self.authorize = authorize
        self.installWebSocket = installWebSocket
        self.installHTTP = installHTTP
        self.refusalBody = refusalBody
        self.decided = decided
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        switch state {
        case .decided:
            return context.fireChannelRead(data)
        case .waiting:
            buffered!.writeBuffer(&bytes)
            if buffered!.readableBytes > UpgradeRequestHead.maximumBytes + Self.maximumEarlyBytes { fail(context: context, ChannelError.eof) }
            return
        case .readingHead:
            break
        }
        if buffered == nil {
            buffered = bytes
        } else {
            buffered!.writeBuffer(&bytes)
        }
        let count = buffered!.readableBytes
        guard let headLength = buffered!.withUnsafeReadableBytes({ Self.headLength(in: $0, from: max(0, scanned - 3)) }) else {
            // The head is not complete: wait for more, unless it is already longer than any head read here.
            scanned = count
            if count >= UpgradeRequestHead.maximumBytes { return tooLong(context: context) }
            keepOwnCopy(context: context)
            return
        }
        guard headLength <= UpgradeRequestHead.maximumBytes else { return tooLong(context: context) }
        guard buffered!.withUnsafeReadableBytes(UpgradeRequestHead.targetsEndpoint) else { return handOver(context: context) }
        let head: UpgradeRequestHead
        switch buffered!.withUnsafeReadableBytes({ UpgradeRequestHead.read($0.prefix(headLength - 4)) }) {
        case .upgrade(let upgrade): head = upgrade
        case .notAnUpgrade: return handOver(context: context)
        case .refused(let rule):
            return refuse(context: context, UpgradeRefusal(status: .badRequest, error: .init(.badRequest, "not a WebSocket upgrade the broker accepts: \(rule)")))
        }
        switch authorize(head) {
        case .now(.success(let identity)):
            upgrade(context: context, head: head, length: headLength, identity: identity)
        case .now(.failure(let refusal)):
            refuse(context: context, refusal)
        case .later(let check):
            state = .waiting(head, length: headLength)
            keepOwnCopy(context: context)
            let promise = context.eventLoop.makePromise(of: Result<VerifiedIdentity, UpgradeRefusal>.self)
            promise.completeWithTask { await check() }
            promise.futureResult.assumeIsolated().whenSuccess { result in
                // The socket may have closed meanwhile; then it was decided as a failure.
                guard case .waiting(let head, let length) = self.state else { return }
                switch result {
                case .success(let identity): self.upgrade(context: context, head: head, length: length, identity: identity)
                case .failure(let refusal): self.refuse(context: context, refusal)
                }
            }
        }
    }

    /// A head longer than ``UpgradeRequestHead/maximumBytes``: refused with 431 when it is for `/v1/ws` (whose
    /// requests this handler decides), handed to the HTTP pipeline, which has limits of its own, otherwise.
    private func tooLong(context: ChannelHandlerContext) {
        guard buffered!.withUnsafeReadableBytes(UpgradeRequestHead.targetsEndpoint) else { return handOver(context: context) }
        refuse(
            context: context,
            UpgradeRefusal(
                status: .init(code: 431, reasonPhrase: "Request Header Fields Too Large"),
                error: .init(.tooLarge, "the request's head is longer than \(UpgradeRequestHead.maximumBytes) bytes")))
    }

    /// Keeps what was read in a buffer of this handler's: holding NIO's receive buffer until the next read would make
    /// the socket's receive pool allocate more buffers, which it keeps for the connection's whole life.
    private func keepOwnCopy(context: ChannelHandlerContext) {
        guard !ownsBuffered, let bytes = buffered else { return }
        var copy = context.channel.allocator.buffer(capacity: bytes.readableBytes)
        copy.writeImmutableBuffer(bytes)
        buffered = copy
        ownsBuffered = true
    }

    /// The length of the head in `bytes`, its blank line included, looking for CRLF CRLF from `start` on; `nil`
    /// while the head has not ended.
    private static func headLength(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var index = start
        while index + 3 < bytes.count {
            if bytes[index + 3] == 10, bytes[index + 2] == 13, bytes[index + 1] == 10, bytes[index] == 13 { return index + 4 }
            index += 1
        }
        return nil
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        if case .decided = state { context.fireChannelReadComplete() }
    }

    package func channelInactive(context: ChannelHandlerContext) {
        if !isDecided {
            state = .decided
            decided(.failure(ChannelError.eof))
        }
        context.fireChannelInactive()
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A client whose input ends before it was decided cannot send the rest, nor read a WebSocket it may no
        // longer write to: closed now, not at the handshake timeout.
        if !isDecided, case ChannelEvent.inputClosed = event { return fail(context: context, ChannelError.eof) }
        context.fireUserInboundEventTriggered(event)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !isDecided { fail(context: context, error) }
        context.fireErrorCaught(error)
    }

    private var isDecided: Bool {
        if case .decided = state { true } else { false }
    }

    /// Ends the connection before anything was decided.
    private func fail(context: ChannelHandlerContext, _ error: any Error) {
        state = .decided
        buffered = nil
        decided(.failure(error))
        context.close(promise: nil)
    }

    /// Writes the 101, installs the WebSocket handlers and leaves the pipeline, handing them what followed the head.
    ///
    /// The 101 is flushed after the handlers are installed, not before: the connection's handler writes its
    /// `welcome` as it is added, so both leave in one write, as one packet, where two writes cost the broker a
    /// second system call and the client a second wake-up.
    private func upgrade(context: ChannelHandlerContext, head: UpgradeRequestHead, length: Int, identity: VerifiedIdentity) {
        state = .decided
        buffered!.moveReaderIndex(forwardBy: length)
        if buffered!.readableBytes == 0 { buffered = nil }
        var response = context.channel.allocator.buffer(capacity: 160)
        response.writeString(head.switchingProtocols)
        context.write(wrapOutboundOut(response), promise: nil)
        do {
            try installWebSocket(context.pipeline.syncOperations, identity)
            // Flushed by the welcome's write already, unless the connection closed as it was added.
            context.flush()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            decided(.success(.webSocket))
        } catch {
            buffered = nil
            decided(.failure(error))
            context.close(promise: nil)
        }
    }

    /// Answers the refusal with its status and JSON body, and closes the socket once the answer is written.
    private func refuse(context: ChannelHandlerContext, _ refusal: UpgradeRefusal) {
        state = .decided
        buffered = nil
        let body = refusalBody(refusal)
        var response = context.channel.allocator.buffer(capacity: 128 + body.readableBytes)
        response.writeString(
            "HTTP/1.1 \(refusal.status.code) \(refusal.status.reasonPhrase)\r\nContent-Type: application/json; charset=utf-8\r\n"
                + "Content-Length: \(body.readableBytes)\r\nConnection: close\r\n\r\n")
        response.writeImmutableBuffer(body)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(response)).whenComplete { _ in channel.close(promise: nil) }
        decided(.success(.refused))
    }

    /// Installs the HTTP pipeline, leaves, and fires what was read into it.
    private func handOver(context: ChannelHandlerContext) {
        state = .decided
        do {
            try installHTTP(context.pipeline.syncOperations)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } catch {
            buffered = nil
            decided(.failure(error))
            context.close(promise: nil)
        }
    }

    package func removeHandler(context: ChannelHandlerContext, removalToken: ChannelHandlerContext.RemovalToken) {
        if let bytes = buffered.take() {
            context.fireChannelRead(wrapInboundOut(bytes))
            context.fireChannelReadComplete()
        }
        context.leavePipeline(removalToken: removalToken)
    }
}
