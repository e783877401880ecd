import NIOCore
import NIOWebSocket
import Synchronization

/// Writes a connection's queued frames straight to its socket on the socket's event loop: no task wakes up, no
/// actor is entered, and every frame queued since the last drain goes out with one flush.
///
/// ``Outbox/push(_:positionChannel:)`` schedules a drain when the queue goes from empty to not empty. A drain
/// takes the frames queued ahead of any close (the close itself is the session's writer task's, which performs
/// WSCore's close handshake) and stops while the socket is not writable: frames then wait in the outbox, where
/// they count against its byte limit and stall timer, so a slow donor is conflated and cut off as before, and
/// NIO's own buffers never grow past what the socket accepts.
final class SocketWriter: Sendable {
    private let channel: any Channel
    private let outbox: Outbox
    private let metrics: BrokerMetrics

    init(channel: any Channel, outbox: Outbox, metrics: BrokerMetrics) {
        self.channel = channel
        self.outbox = outbox
        self.metrics = metrics
    }

    /// Asks for a drain on the socket's event loop (from any thread). Always a new event-loop task, never a
    /// drain inside the caller: drains run one after the other, so frames keep their order.
    func schedule() {
        channel.eventLoop.execute { self.drain() }
    }

    /// Writes what is queued, if the socket takes it. On the event loop only.
    func drain() {
        guard channel.isActive else {
            outbox.socketGone()
            return
        }
        guard channel.isWritable else {
            // `WritabilitySignal` calls `drain` again when the socket drains.
            return
        }
        var written = 0
        outbox.takeForSocket { frame in
            channel.write(WebSocketFrame(fin: true, opcode: .text, data: frame), promise: nil)
            written += 1
        }
        if written > 0 {
            channel.flush()
            metrics.framesOut.increment(by: Int64(written))
        }
    }
}

/// Tells a connection's ``SocketWriter`` that its socket accepts writes again. Created with the pipeline, before
/// the writer exists; the writer registers once the WebSocket is served.
final class WritabilitySignal: Sendable {
    private let callback = Mutex<(@Sendable () -> Void)?>(nil)

    init() {}

    /// Sets what runs when the socket becomes writable.
    func onWritable(_ body: @escaping @Sendable () -> Void) {
        callback.withLock { $0 = body }
    }

    fileprivate func fire() {
        callback.withLock { $0 }?()
    }

    /// The pipeline handler that fires the signal.
    final class Handler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = WebSocketFrame
        private let signal: WritabilitySignal

        init(_ signal: WritabilitySignal) {
            self.signal = signal
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            if context.channel.isWritable { signal.fire() }
            context.fireChannelWritabilityChanged()
        }
    }
}
