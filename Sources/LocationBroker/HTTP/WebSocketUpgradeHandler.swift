import NIOCore

/// The first handler of every accepted socket: it reads the request head itself and, for an upgrade request in
/// the plain form (``UpgradeRequestHead``) whose client token is accepted at once, writes the 101 and installs the
/// WebSocket handlers, without NIO's HTTP reader, its upgrade handler, or the futures that remove them (about
/// 45 % of a connect storm's time, issue 17).
///
/// Anything else goes to NIO's HTTP pipeline, unchanged, with every byte read so far fired again into it, so each
/// refusal keeps its status and JSON body: another path or method, a head longer than
/// ``UpgradeRequestHead/maximumBytes``, a head not in the plain form, bytes after the head, a refused token, a
/// watch link (its check reads the store, which suspends), a broker that is draining.
final class WebSocketUpgradeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Whether the head's request becomes a WebSocket now: the identity, or `nil` to hand the request over.
    private let authorize: (UpgradeRequestHead) -> VerifiedIdentity?
    /// Installs the WebSocket handlers after this one.
    private let installWebSocket: (ChannelPipeline.SynchronousOperations, VerifiedIdentity) throws -> Void
    /// Installs NIO's HTTP pipeline after this one; what was read so far is fired into it next.
    private let installHTTP: (ChannelPipeline.SynchronousOperations) throws -> Void
    /// Told once when the socket became a WebSocket here (`success`), or closed or failed before anything was
    /// decided; not told when the connection was handed over (NIO's pipeline tells then).
    private let decided: (Result<Void, any Error>) -> Void
    private var buffered: ByteBuffer?
    /// How many buffered bytes are known to hold no end of head (a head sent byte by byte is scanned once).
    private var scanned = 0
    /// Whether `buffered` is a copy of this handler's, rather than the receive buffer NIO handed over.
    private var ownsBuffered = false
    private var isDecided = false

    init(
        authorize: @escaping (UpgradeRequestHead) -> VerifiedIdentity?,
        installWebSocket: @escaping (ChannelPipeline.SynchronousOperations, VerifiedIdentity) throws -> Void,
        installHTTP: @escaping (ChannelPipeline.SynchronousOperations) throws -> Void,
        decided: @escaping (Result<Void, any Error>) -> Void
    ) {
        self.authorize = authorize
        self.installWebSocket = installWebSocket
        self.installHTTP = installHTTP
        self.decided = decided
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        guard !isDecided else { return context.fireChannelRead(data) }
        if buffered == nil {
            buffered = bytes
        } else {
            buffered!.writeBuffer(&bytes)
        }
        let count = buffered!.readableBytes
        guard let headLength = buffered!.withUnsafeReadableBytes({ Self.headLength(in: $0, from: max(0, scanned - 3)) }) else {
            // The head is not complete: wait for more, unless it is already too long to be read by hand.
            scanned = count
            if count >= UpgradeRequestHead.maximumBytes { return handOver(context: context) }
            if !ownsBuffered {
                // Kept in a buffer of our own: holding NIO's receive buffer until the next read would make the
                // socket's receive pool allocate more buffers, which it keeps for the connection's whole life.
                var copy = context.channel.allocator.buffer(capacity: count)
                copy.writeImmutableBuffer(buffered!)
                buffered = copy
                ownsBuffered = true
            }
            return
        }
        guard headLength <= UpgradeRequestHead.maximumBytes, headLength == count,
            let head = buffered!.withUnsafeReadableBytes({ UpgradeRequestHead.parse($0.prefix(headLength - 4)) }), let identity = authorize(head)
        else { return handOver(context: context) }
        upgrade(context: context, head: head, identity: identity)
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

    func channelReadComplete(context: ChannelHandlerContext) {
        if isDecided { context.fireChannelReadComplete() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !isDecided {
            isDecided = true
            decided(.failure(ChannelError.eof))
        }
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A client whose input ends before its head did cannot send the rest: closed now, not at the handshake timeout.
        if !isDecided, case ChannelEvent.inputClosed = event {
            isDecided = true
            decided(.failure(ChannelError.eof))
            return context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !isDecided {
            isDecided = true
            decided(.failure(error))
            context.close(promise: nil)
        }
        context.fireErrorCaught(error)
    }

    /// Writes the 101, installs the WebSocket handlers and leaves the pipeline.
    private func upgrade(context: ChannelHandlerContext, head: UpgradeRequestHead, identity: VerifiedIdentity) {
        isDecided = true
        buffered = nil
        var response = context.channel.allocator.buffer(capacity: 160)
        response.writeString(head.switchingProtocols)
        context.writeAndFlush(wrapOutboundOut(response), promise: nil)
        do {
            try installWebSocket(context.pipeline.syncOperations, identity)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            decided(.success(()))
        } catch {
            decided(.failure(error))
            context.close(promise: nil)
        }
    }

    /// Installs NIO's HTTP pipeline, leaves, and fires what was read into it.
    private func handOver(context: ChannelHandlerContext) {
        isDecided = true
        do {
            try installHTTP(context.pipeline.syncOperations)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } catch {
            decided(.failure(error))
            context.close(promise: nil)
        }
    }

    func removeHandler(context: ChannelHandlerContext, removalToken: ChannelHandlerContext.RemovalToken) {
        if let bytes = buffered.take() {
            context.fireChannelRead(wrapInboundOut(bytes))
            context.fireChannelReadComplete()
        }
        context.leavePipeline(removalToken: removalToken)
    }
}
