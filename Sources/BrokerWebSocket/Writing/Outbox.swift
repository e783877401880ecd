import BrokerCore
import BrokerProtocol
import DequeModule
import NIOCore

/// A WebSocket connection's outbound queue: the ``FrameSink`` the hub writes to. Producers (the hub, the
/// connection's own handler) push without waiting, from any thread; the socket's event loop drains it through
/// the connection's ``SocketWriter``.
///
/// The policy (byte bound, conflation, stall -> 4008, close after the queued frames or instead of them) is the
/// core's ``OutboxQueue``; this class adds the lock around it, the WebSocket's control frames and the drain
/// scheduling. Control frames are bounded too: at most one pong waits (the answer to a newer ping replaces it)
/// and one heartbeat ping, so a client that streams pings and never reads cannot grow the broker. The heartbeat
/// ping may wait for data (``owePing()``): it then goes with the next frames the socket takes, in the same
/// write and flush, and asks for no drain of its own. The first close
/// is reported to the connection's handler (its ``owner``), whose state machine cuts the socket after the close
/// grace, since a client that does not read cannot receive the close frame; ``abort()`` cuts it at once.
///
/// References: the outbox holds its writer (to schedule drains and write) and its handler (to report closes),
/// both until ``finish()``; the writer holds no outbox, and ``LoopDrains`` holds an outbox only between a
/// schedule and the drain it asked for. The handler is held, not closures that call it: two closures would cost
/// every connection two allocations. Its lock is a leaf
/// (docs/LOCK-ORDER.md): a hub shard lock may be held while pushing here; the event-loop wake-up and the
/// ``LoopDrains`` list lock are taken after this lock is released.
package final class Outbox: FrameSink {
    /// What a socket drain takes at once.
    package struct Taken {
        /// The frames, in order, and the close that followed them, if one was queued.
        package var queued: OutboxQueue.Taken
        /// The payload of the pong to send, if a ping is waiting for its answer.
        package var pong: ByteBuffer?
        /// Whether the heartbeat ping is to be sent.
        package var ping = false
    }

    /// Where the heartbeat ping is.
    private enum PingWait {
        case none
        /// It goes with the next frames or pong the socket takes.
        case withData
        /// It goes with the next drain, alone if need be.
        case now
    }

    private struct State {
        var queue: OutboxQueue
        /// The connection's handler, told when a close is queued (it starts the close grace: once) and when the
        /// socket is to be cut; `nil` before it is set and once the outbox is finished or aborted.
        var owner: NIOLoopBound<WebSocketConnectionHandler>?
        /// The first close was reported to the owner.
        var closeReported = false
        // The one-byte fields are declared together, so that they share one word and the outbox its allocator
        // size class.
        /// The heartbeat ping waiting to be written.
        var ping = PingWait.none
        /// Frames of messages were taken for the socket since ``takeDataWritten()`` was last called.
        var dataTaken = false
        /// Writes the frames from the socket's event loop; `nil` before the WebSocket is served.
        var writer: SocketWriter?
        /// A socket drain is scheduled, or waits for the socket to become writable.
        var drainScheduled = false
        /// The answer to the newest ping not yet answered: one at most, whatever the client sends.
        var pendingPong: ByteBuffer?

        /// A ping that waits for data is no work: it asks for no drain.
        var hasWork: Bool { queue.hasWork || pendingPong != nil || ping == .now }

        /// The writer to schedule, if a drain is not already scheduled.
        mutating func claimDrain() -> SocketWriter? {
            guard let writer, !drainScheduled, hasWork else { return nil }
            drainScheduled = true
            return writer
        }

        /// The owner to tell that a close was queued, once: the first close uses it up.
        mutating func takeCloseQueued() -> NIOLoopBound<WebSocketConnectionHandler>? {
            guard !closeReported else { return nil }
            closeReported = true
            return owner
        }
    }

    private let state: LockedValue<State>

    package init(limit: Int, stallLimit: Duration = .seconds(10)) {
        state = LockedValue(State(queue: OutboxQueue(limit: limit, stallLimit: stallLimit)))
    }

    /// Sets the connection's handler, told on its event loop when the first close is queued, from any thread
    /// (``WebSocketConnectionHandler/outboxCloseQueued()``: it starts the close grace, after which its state machine
    /// cuts a socket that did not finish the handshake), and when the broker gives up on the socket at once
    /// (``abort()``, ``WebSocketConnectionHandler/outboxAborted()``).
    func setOwner(_ owner: NIOLoopBound<WebSocketConnectionHandler>) {
        state.withLock { $0.owner = owner }
    }

    /// Tells `owner` on its event loop that a close was queued.
    private static func reportCloseQueued(to owner: NIOLoopBound<WebSocketConnectionHandler>?) {
        guard let owner else { return }
        owner.eventLoop.execute { owner.value.outboxCloseQueued() }
    }

    package func enqueue(_ frame: PreparedFrame, conflationKey: String?) -> EnqueueResult {
        let (result, drain, closeQueued) = state.withLock { state -> (EnqueueResult, SocketWriter?, NIOLoopBound<WebSocketConnectionHandler>?) in
            let result = state.queue.enqueue(frame, conflationKey: conflationKey, now: ContinuousClock.now)
            switch result {
            case .queued: return (result, state.claimDrain(), nil)
            case .overflowed:
                // The queue now holds the 4008 close: no pong or heartbeat is owed any more.
                state.pendingPong = nil
                state.ping = .none
                return (result, state.claimDrain(), state.takeCloseQueued())
            case .conflated, .closed: return (result, nil, nil)
            }
        }
        Self.reportCloseQueued(to: closeQueued)
        drain?.schedule(self)
        return result
    }

    package func discardQueued(conflationKey: String) {
        state.withLock { _ = $0.queue.discard(conflationKey: conflationKey) }
    }

    /// Queues the answer to a client's ping, replacing an answer still waiting: a client is owed the pong of
    /// its newest ping only (RFC 6455 §5.5.3), so a flood of pings holds one pong at most.
    func pushPong(_ payload: ByteBuffer) {
        let drain = state.withLock { state -> SocketWriter? in
            guard !state.queue.isClosing && !state.queue.isFinished else { return nil }
            state.pendingPong = payload
            return state.claimDrain()
        }
        drain?.schedule(self)
    }

    /// Queues the heartbeat ping (one at most), to go as soon as the socket takes it.
    func pushPing() {
        let drain = state.withLock { state -> SocketWriter? in
            guard !state.queue.isClosing && !state.queue.isFinished else { return nil }
            state.ping = .now
            return state.claimDrain()
        }
        drain?.schedule(self)
    }

    /// Lets the heartbeat ping (one at most) go with the next frames the socket takes (or the next pong), in the
    /// same write: no drain is asked for. A ping already queued to go at once stays so.
    func owePing() {
        state.withLock { state in
            guard !state.queue.isClosing && !state.queue.isFinished, state.ping == .none else { return }
            state.ping = .withData
        }
    }

    /// Whether frames of messages were taken for the socket since the previous call.
    func takeDataWritten() -> Bool {
        state.withLock { state in
            defer { state.dataTaken = false }
            return state.dataTaken
        }
    }

    /// Hands the frames to `writer` from now on; frames already queued go at once.
    func attach(_ writer: SocketWriter) {
        let drain = state.withLock { state -> SocketWriter? in
            guard !state.queue.isFinished else { return nil }
            state.writer = writer
            return state.claimDrain()
        }
        drain?.schedule(self)
    }

    /// Writes what is queued through the attached writer, if the socket takes it. On the socket's event loop
    /// only (the connection's handler, when the socket becomes writable again).
    func drain() {
        var buffer = DrainBuffer()
        state.withLock { $0.writer }?.drain(self, reusing: &buffer)
    }

    /// Takes everything queued for the socket: the frames, the control frames (the heartbeat ping that waits for
    /// data included, when frames or a pong go), and the close that followed the frames, if one was queued
    /// (nothing more is written after it).
    func takeForSocket() -> Taken {
        var buffer = DrainBuffer()
        var taken = takeForSocket(into: &buffer)
        taken.queued.entries = buffer.frames
        return taken
    }

    /// Takes everything queued for the socket as ``takeForSocket()`` does, but into `buffer`, the writer's, reused
    /// from drain to drain (`taken.queued.entries` stays empty): the storages are swapped, so a delivery neither
    /// allocates nor frees one (``OutboxQueue/take(into:)``).
    package func takeForSocket(into buffer: inout DrainBuffer) -> Taken {
        state.withLock { state in
            let close = state.queue.take(into: &buffer)
            // Once per drain, whatever the number of frames: whether data went (the next heartbeat asks), and the
            // ping that waited for it.
            let dataTaken = !buffer.frames.isEmpty
            state.dataTaken = state.dataTaken || dataTaken
            let ping = state.ping == .now || (state.ping == .withData && (dataTaken || state.pendingPong != nil))
            let taken = Taken(queued: OutboxQueue.Taken(close: close), pong: state.pendingPong, ping: ping)
            state.pendingPong = nil
            if ping { state.ping = .none }
            state.drainScheduled = false
            return taken
        }
    }

    /// Asks the writer to close the WebSocket. With `discardPending`, frames not yet written are dropped.
    /// The socket is cut outright a moment later if the close handshake has not finished by then.
    package func close(code: UInt16, reason: String, discardPending: Bool) {
        let (drain, closeQueued) = state.withLock { state -> (SocketWriter?, NIOLoopBound<WebSocketConnectionHandler>?) in
            guard state.queue.close(code: code, reason: reason, discardPending: discardPending) else { return (nil, nil) }
            // Once the broker closes, the client is owed no pong, and no heartbeat is due.
            state.pendingPong = nil
            state.ping = .none
            return (state.claimDrain(), state.takeCloseQueued())
        }
        Self.reportCloseQueued(to: closeQueued)
        drain?.schedule(self)
    }

    /// Cuts the socket now, without waiting for a close handshake or the close grace (the end of the shutdown
    /// grace).
    package func abort() {
        let owner = state.withLock { state -> NIOLoopBound<WebSocketConnectionHandler>? in
            defer { state.owner = nil }
            return state.owner
        }
        guard let owner else { return }
        owner.eventLoop.execute { owner.value.outboxAborted() }
    }

    /// Whether a close has been asked for, or the connection is over.
    package var isClosing: Bool { state.withLock { $0.queue.isClosing || $0.queue.isFinished } }

    /// Bytes queued now.
    package var queuedBytes: Int { state.withLock { $0.queue.bytes } }

    /// Stops the queue for good (the socket is gone, or a close was answered): queued frames are dropped, and
    /// so are later pushes.
    package func finish() {
        state.withLock { state in
            state.queue.finish()
            state.pendingPong = nil
            state.ping = .none
            state.owner = nil
            state.writer = nil
        }
    }
}
