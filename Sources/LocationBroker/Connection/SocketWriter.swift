import NIOCore
import NIOWebSocket

/// Writes a connection's queued frames straight to its socket on the socket's event loop: no task wakes up, no
/// actor is entered, and every frame queued since the last drain goes out with one flush.
///
/// ``Outbox/push(_:positionChannel:)`` schedules a drain when the queue goes from empty to not empty. A drain
/// writes what is queued, then the close frame if a close was asked for (the connection's handler finishes the
/// handshake when the client answers). It stops while the socket is not writable: frames then wait in the
/// outbox, where they count against its byte limit and stall timer, so a slow donor is conflated and cut off,
/// and NIO's own buffers never grow past what the socket accepts.
final class SocketWriter: Sendable {
    private let channel: any Channel
    /// Where complete frames are written: the context of the pipeline's WebSocket frame encoder, so that they
    /// go to the socket (or TLS) below it as they are, without a header built for each delivery.
    private let framedOutput: NIOLoopBound<ChannelHandlerContext>
    private let outbox: Outbox
    private let metrics: BrokerMetrics
    private let loopDrains: LoopDrains

    /// - Parameters:
    ///   - encoderContext: the context of the channel's `WebSocketFrameEncoder`.
    ///   - loopDrains: the drains of the channel's event loop.
    init(channel: any Channel, encoderContext: ChannelHandlerContext, outbox: Outbox, metrics: BrokerMetrics, loopDrains: LoopDrains) {
        self.channel = channel
        self.framedOutput = NIOLoopBound(encoderContext, eventLoop: channel.eventLoop)
        self.outbox = outbox
        self.metrics = metrics
        self.loopDrains = loopDrains
    }

    /// Asks for a drain on the socket's event loop (from any thread). Always a later event-loop task, never a
    /// drain inside the caller: drains run one after the other, so frames keep their order.
    func schedule() {
        loopDrains.schedule(self)
    }

    /// Writes what is queued, if the socket takes it. On the event loop only.
    func drain() {
        guard channel.isActive else {
            outbox.finish()
            return
        }
        guard channel.isWritable else {
            // The connection's handler calls `drain` again when the socket drains.
            return
        }
        var written = 0
        let output = framedOutput.value
        let taken = outbox.takeForSocket { frame in
            output.write(NIOAny(frame), promise: nil)
            written += 1
        }
        // Control frames may come between messages (RFC 6455 §5.4); every message the broker sends is one frame.
        if let pong = taken.pong {
            channel.write(WebSocketFrame(fin: true, opcode: .pong, data: pong), promise: nil)
        }
        if taken.ping {
            channel.write(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer()), promise: nil)
        }
        let close = taken.close
        if let close {
            var data = channel.allocator.buffer(capacity: 2 + close.reason.utf8.count)
            data.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: Int(close.code)))
            data.writeString(close.reason)
            channel.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), promise: nil)
        }
        if written > 0 || close != nil || taken.pong != nil || taken.ping {
            channel.flush()
        }
        if written > 0 {
            metrics.framesOut.increment(by: Int64(written))
        }
    }
}
