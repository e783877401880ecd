import BrokerCore
import NIOCore
import NIOWebSocket

/// Writes a connection's queued frames straight to its socket on the socket's event loop: no task wakes up, no
/// actor is entered, and every frame queued since the last drain goes out with one flush.
///
/// ``Outbox/enqueue(_:conflationKey:)`` schedules a drain when the queue goes from empty to not empty. A drain
/// writes what is queued, then the close frame if a close was asked for (the connection's handler finishes the
/// handshake when the client answers). It stops while the socket is not writable: frames then wait in the
/// outbox, where they count against its byte limit and stall timer, so a slow donor is conflated and cut off,
/// and NIO's own buffers never grow past what the socket accepts.
///
/// The writer holds no outbox: each drain is handed the outbox it drains (see ``LoopDrains``).
package final class SocketWriter: Sendable {
    private let channel: any Channel
    /// Where complete frames are written: the context of the pipeline's WebSocket frame encoder, so that they
    /// go to the socket (or TLS) below it as they are, without a header built for each delivery.
    private let framedOutput: NIOLoopBound<ChannelHandlerContext>
    /// The per-loop state of the channel's event loop: its drains and its connections' timers.
    let loopDrains: LoopDrains

    /// - Parameters:
    ///   - encoderContext: the context of the channel's `WebSocketFrameEncoder`.
    ///   - loopDrains: the drains of the channel's event loop.
    init(channel: any Channel, encoderContext: ChannelHandlerContext, loopDrains: LoopDrains) {
        self.channel = channel
        self.framedOutput = NIOLoopBound(encoderContext, eventLoop: channel.eventLoop)
        self.loopDrains = loopDrains
    }

    /// Asks for a drain of `outbox` on the socket's event loop (from any thread). Never a drain inside the caller:
    /// a later event-loop task, or the end of the frame the loop is handling (``LoopDrains/readEnded()``); drains
    /// run one after the other, so frames keep their order.
    func schedule(_ outbox: Outbox) {
        loopDrains.schedule(outbox, through: self)
    }

    /// Writes what `outbox` holds, if the socket takes it. On the event loop only.
    /// - Parameter buffer: the buffer the frames are taken into, reused from drain to drain (one per event loop,
    ///   ``LoopDrains``), so that a delivery allocates no queue storage; it is left empty.
    func drain(_ outbox: Outbox, reusing buffer: inout DrainBuffer) {
        guard channel.isActive else {
            outbox.finish()
            return
        }
        guard channel.isWritable else {
            // The connection's handler drains again when the socket drains.
            return
        }
        let taken = outbox.takeForSocket(into: &buffer)
        let frameCount = buffer.frames.count
        let output = framedOutput.value
        for entry in buffer.frames {
            output.write(NIOAny(entry.frame.bytes), promise: nil)
        }
        // Emptied for the loop's next drain (no copy of the frames is held, so its storage is kept, not copied).
        buffer.removeAll()
        // Control frames may come between messages (RFC 6455 §5.4); every message the broker sends is one frame.
        if let pong = taken.pong {
            channel.write(WebSocketFrame(fin: true, opcode: .pong, data: pong), promise: nil)
        }
        if taken.ping {
            channel.write(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer()), promise: nil)
        }
        let close = taken.queued.close
        if let close {
            var data = channel.allocator.buffer(capacity: 2 + close.reason.utf8.count)
            data.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: Int(close.code)))
            data.writeString(close.reason)
            channel.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), promise: nil)
        }
        if frameCount > 0 || close != nil || taken.pong != nil || taken.ping {
            // From the encoder down: the handlers above it hold no write back, and a flush from the channel would
            // walk through each of them first, on every delivery.
            output.flush()
        }
        if frameCount > 0 {
            loopDrains.countWritten(frameCount)
        }
    }
}
