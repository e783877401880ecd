import BrokerProtocol
import DequeModule
import NIOCore
import Synchronization

/// A connection's bounded outbound queue: producers (the hub, the connection's own handler) push without
/// waiting, from any thread; the connection's ``SocketWriter`` writes the frames, and finally the close, from
/// the socket's event loop.
///
/// Bounded in bytes. When a position does not fit, the queued position of the same channel is replaced by
/// the newer one (conflation: only the newest position matters). The consumer is judged too slow, and the
/// connection closed with 4008, when a frame fits nowhere, or when the writer has not taken anything for
/// longer than the stall limit while frames wait. Every close also cuts the socket a moment later
/// (``setAbortHandler(_:)``), since a client that does not read cannot receive the close frame.
///
/// Control frames are bounded too: at most one pong waits (the answer to a newer ping replaces it) and one
/// heartbeat ping, so a client that streams pings and never reads cannot grow the broker.
///
/// Lock order: a hub shard lock may be held while pushing here; this lock is a leaf and is never held while
/// taking another.
final class Outbox: Sendable {
    /// One thing for the writer to do.
    struct Entry: Sendable {
        /// A complete WebSocket text frame, header included (``TextFrame``).
        var frame: ByteBuffer
        /// The channel of a position frame, which may be conflated; `nil` for every other frame.
        var positionChannel: String?
        /// When set, the writer closes the WebSocket with this code and reason instead of writing `frame`.
        var close: Close?
    }

    /// A close the broker asked for.
    struct Close: Sendable, Equatable {
        var code: UInt16
        var reason: String
    }

    /// What a socket drain takes from the queue.
    struct Taken {
        /// The payload of the pong to send, if a ping is waiting for its answer.
        var pong: ByteBuffer?
        /// Whether the heartbeat ping is to be sent.
        var ping = false
        /// The close that followed the frames, if one was queued; nothing more is written after it.
        var close: Close?
    }

    /// What became of a pushed frame.
    enum PushResult: Equatable {
        /// Queued behind the others.
        case queued
        /// Replaced an older position of the same channel.
        case conflated
        /// The consumer is too slow: the connection is now closing with 4008.
        case overflowed
        /// The connection is closing or closed; the frame was dropped.
        case closed
    }

    private struct State {
        var entries = Deque<Entry>()
        var bytes = 0
        /// A close is queued: nothing more is accepted.
        var closing = false
        /// Nothing more will be written: the close was written, or the socket is gone.
        var finished = false
        /// Since when frames have been waiting without the writer taking any.
        var stalledSince: ContinuousClock.Instant?
        var onAbort: (@Sendable () -> Void)?
        /// Writes the frames from the socket's event loop; `nil` before the WebSocket is served (and in unit
        /// tests, which read the queue with ``takeQueued()``).
        var socketWriter: SocketWriter?
        /// A socket drain is scheduled, or waits for the socket to become writable.
        var socketDrainScheduled = false
        /// The answer to the newest ping not yet answered: one at most, whatever the client sends.
        var pendingPong: ByteBuffer?
        /// The heartbeat ping waits for the socket.
        var pendingPing = false

        var hasWork: Bool { !entries.isEmpty || pendingPong != nil || pendingPing }
    }

    private let state = Mutex(State())
    /// The byte limit of queued frames.
    let limit: Int
    /// How long frames may wait without the writer taking any before the consumer is judged too slow.
    let stallLimit: Duration

    init(limit: Int, stallLimit: Duration = .seconds(10)) {
        self.limit = limit
        self.stallLimit = stallLimit
    }

    /// Sets what cuts the socket when a close does not happen in time (the handler waits a moment itself).
    func setAbortHandler(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.onAbort = handler }
    }

    /// Queues a frame without waiting. Pass `positionChannel` for position frames so they can be conflated.
    @discardableResult
    func push(_ frame: ByteBuffer, positionChannel: String? = nil) -> PushResult {
        let size = frame.readableBytes
        var drain: SocketWriter?
        let (result, abort) = state.withLock { state -> (PushResult, (@Sendable () -> Void)?) in
            if state.closing || state.finished { return (.closed, nil) }
            if !state.entries.isEmpty {
                let now = ContinuousClock.now
                if let since = state.stalledSince {
                    if now - since > stallLimit { return (.overflowed, Self.judgeSlow(&state, drain: &drain)) }
                } else {
                    state.stalledSince = now
                }
            }
            if state.bytes + size <= limit {
                state.entries.append(Entry(frame: frame, positionChannel: positionChannel))
                state.bytes += size
                drain = Self.claimDrain(&state)
                return (.queued, nil)
            }
            if let channel = positionChannel,
                let index = state.entries.lastIndex(where: { $0.positionChannel == channel }),
                state.bytes - state.entries[index].frame.readableBytes + size <= limit
            {
                state.bytes += size - state.entries[index].frame.readableBytes
                state.entries[index].frame = frame
                return (.conflated, nil)
            }
            return (.overflowed, Self.judgeSlow(&state, drain: &drain))
        }
        abort?()
        drain?.schedule()
        return result
    }

    /// Queues the answer to a client's ping, replacing an answer still waiting: a client is owed the pong of
    /// its newest ping only (RFC 6455 §5.5.3), so a flood of pings holds one pong at most.
    func pushPong(_ payload: ByteBuffer) {
        let drain = state.withLock { state -> SocketWriter? in
            guard !state.closing && !state.finished else { return nil }
            state.pendingPong = payload
            return Self.claimDrain(&state)
        }
        drain?.schedule()
    }

    /// Queues the heartbeat ping (one at most).
    func pushPing() {
        let drain = state.withLock { state -> SocketWriter? in
            guard !state.closing && !state.finished else { return nil }
            state.pendingPing = true
            return Self.claimDrain(&state)
        }
        drain?.schedule()
    }

    /// Hands the frames to `writer` from now on; frames already queued go at once.
    func attach(_ writer: SocketWriter) {
        let schedule = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            state.socketWriter = writer
            return Self.claimDrain(&state) != nil
        }
        if schedule { writer.schedule() }
    }

    /// Takes the queued frames for the socket writer and passes each to `write`, in order.
    /// - Returns: the control frames to send (a pong, the heartbeat ping), and the close that followed the
    ///   frames, if one was queued; the writer sends it, and nothing more is written after it.
    func takeForSocket(_ write: (ByteBuffer) -> Void) -> Taken {
        let (entries, taken) = state.withLock { state -> (Deque<Entry>, Taken) in
            var entries = Deque<Entry>()
            swap(&entries, &state.entries)
            var taken = Taken(pong: state.pendingPong, ping: state.pendingPing)
            state.pendingPong = nil
            state.pendingPing = false
            state.bytes = 0
            state.stalledSince = nil
            state.socketDrainScheduled = false
            guard let close = entries.last?.close else { return (entries, taken) }
            // A close is always last: nothing is queued after it.
            entries.removeLast()
            state.finished = true
            taken.close = close
            return (entries, taken)
        }
        for entry in entries { write(entry.frame) }
        return taken
    }

    /// Asks the writer to close the WebSocket. With `discardPending`, frames not yet written are dropped.
    /// The socket is cut outright a moment later if the close handshake has not finished by then.
    func close(code: UInt16, reason: String, discardPending: Bool) {
        var drain: SocketWriter?
        let abort = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.closing && !state.finished else { return nil }
            Self.queueClose(&state, code: code, reason: reason, discardPending: discardPending)
            drain = Self.claimDrain(&state)
            defer { state.onAbort = nil }
            return state.onAbort
        }
        abort?()
        drain?.schedule()
    }

    /// Cuts the socket through the abort handler, if it has not been used yet.
    func abort() {
        let abort = state.withLock { state -> (@Sendable () -> Void)? in
            defer { state.onAbort = nil }
            return state.onAbort
        }
        abort?()
    }

    /// Whether a close has been asked for, or the connection is over.
    var isClosing: Bool { state.withLock { $0.closing || $0.finished } }

    /// Whether nothing more will be written: the close was written, or the socket is gone.
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Bytes queued now.
    var queuedBytes: Int { state.withLock { $0.bytes } }

    /// Stops the queue for good (the socket is gone, or a close was answered): queued frames are dropped, and
    /// so are later pushes.
    func finish() {
        state.withLock { state in
            state.finished = true
            state.entries.removeAll()
            state.bytes = 0
            state.pendingPong = nil
            state.pendingPing = false
            state.onAbort = nil
            state.socketWriter = nil
        }
    }

    /// Takes every queued entry (for tests and inspection, when no socket writer is attached).
    func takeQueued() -> Deque<Entry> {
        state.withLock { state in
            defer {
                state.entries.removeAll()
                state.bytes = 0
                state.stalledSince = nil
            }
            return state.entries
        }
    }

    /// The socket writer to schedule, if a drain is not already scheduled.
    private static func claimDrain(_ state: inout State) -> SocketWriter? {
        guard let writer = state.socketWriter, !state.socketDrainScheduled, state.hasWork else { return nil }
        state.socketDrainScheduled = true
        return writer
    }

    /// Queues a 4008 close in place of everything queued.
    /// - Returns: the abort handler, to call once the lock is released.
    private static func judgeSlow(_ state: inout State, drain: inout SocketWriter?) -> (@Sendable () -> Void)? {
        queueClose(&state, code: CloseCode.slowConsumer, reason: "slow consumer: outbound queue full", discardPending: true)
        drain = claimDrain(&state)
        defer { state.onAbort = nil }
        return state.onAbort
    }

    private static func queueClose(_ state: inout State, code: UInt16, reason: String, discardPending: Bool) {
        if discardPending {
            state.entries.removeAll()
            state.bytes = 0
        }
        // Once the broker closes, the client is owed no pong, and no heartbeat is due.
        state.pendingPong = nil
        state.pendingPing = false
        state.entries.append(Entry(frame: ByteBuffer(), positionChannel: nil, close: Close(code: code, reason: reason)))
        state.closing = true
    }
}
