import NIOCore
import NIOWebSocket

/// The first of the broker's handlers on an upgraded WebSocket, before NIO's `NIOWebSocketFrameAggregator`.
///
/// It refuses a client's data frames that are not masked (RFC 6455 §5.1): the aggregator drops the mask of
/// what it joins, so the check must come before it. It notes that the client was heard, whatever it sent, a
/// fragment included, for the heartbeat (``takeClientWasHeard()``). And it hands the aggregator each fragment
/// but the last as a compact, unmasked copy: a fragment read from the socket is a slice that would keep the
/// whole receive buffer alive while the aggregator waits for the message's last fragment.
final class ClientFrameGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame

    private var clientWasHeard = false

    init() {}

    /// Whether a frame arrived since the previous call.
    func takeClientWasHeard() -> Bool {
        defer { clientWasHeard = false }
        return clientWasHeard
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        clientWasHeard = true
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary, .continuation:
            guard let maskKey = frame.maskKey else {
                return context.fireErrorCaught(WebSocketViolation.unmasked)
            }
            // A frame with FIN (a whole message, or the last fragment) is joined at once; only the others are kept.
            guard !frame.fin else { return context.fireChannelRead(data) }
            var copy = context.channel.allocator.buffer(capacity: frame.length)
            copy.writeImmutableBuffer(frame.data)
            copy.webSocketUnmask(maskKey)
            context.fireChannelRead(wrapInboundOut(WebSocketFrame(fin: frame.fin, opcode: frame.opcode, data: copy)))
        default:
            context.fireChannelRead(data)
        }
    }
}
