import BrokerProtocol
import DequeModule
import NIOCore
import Synchronization

/// A connection's bounded outbound queue: producers (the hub, the connection's own reader) push without
/// waiting; the connection's ``SocketWriter`` writes the frames from the socket's event loop, and the
/// connection's writer task performs the close (before a socket writer is attached, it writes frames too).
///
/// Bounded in bytes. When a position does not fit, the queued position of the same channel is replaced by
/// the newer one (conflation: only the newest position matters). The consumer is judged too slow, and the
/// connection closed with 4008, when a frame fits nowhere, or when the writer has not taken anything for
/// longer than the stall limit while frames wait. A slow consumer's socket is also closed outright a moment
/// later (``onAbort``), since a writer stuck on a full socket cannot send the close frame itself.
///
/// Lock order: a hub shard lock may be held while pushing here; this lock is a leaf and is never held while
/// taking another.
final class Outbox: Sendable {
    /// One thing for the writer to do.
    struct Entry: Sendable {
        /// A complete text frame.
        var frame: ByteBuffer
        /// The channel of a position frame, which may be conflated; `nil` for every other frame.
        var positionChannel: String?
        /// When set, the writer closes the WebSocket with this code and reason instead of writing `frame`.
        var close: (code: UInt16, reason: String)?
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
        var waiter: CheckedContinuation<Void, Never>?
        /// A close is queued: nothing more is accepted.
        var closing = false
        /// The writer has stopped: nothing more will be written.
        var finished = false
        /// Since when frames have been waiting without the writer taking any.
        var stalledSince: ContinuousClock.Instant?
        var onAbort: (@Sendable () -> Void)?
        /// While set, frames go to the socket from its event loop (``SocketWriter``) and the writer task only
        /// performs the close; while `nil` (before the WebSocket is served, and in unit tests), the writer task
        /// takes everything.
        var socketWriter: SocketWriter?
        /// A socket drain is scheduled, or waits for the socket to become writable.
        var socketDrainScheduled = false
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
        let (result, waiter, abort) = state.withLock {
            state -> (PushResult, CheckedContinuation<Void, Never>?, (@Sendable () -> Void)?) in
            if state.closing || state.finished { return (.closed, nil, nil) }
            if !state.entries.isEmpty {
                let now = ContinuousClock.now
                if let since = state.stalledSince {
                    if now - since > stallLimit { return Self.judgeSlow(&state) }
                } else {
                    state.stalledSince = now
                }
            }
            if state.bytes + size <= limit {
                state.entries.append(Entry(frame: frame, positionChannel: positionChannel))
                state.bytes += size
                if let writer = state.socketWriter {
                    if !state.socketDrainScheduled {
                        state.socketDrainScheduled = true
                        drain = writer
                    }
                    return (.queued, nil, nil)
                }
                return (.queued, Self.takeWaiter(&state), nil)
            }
            if let channel = positionChannel,
                let index = state.entries.lastIndex(where: { $0.positionChannel == channel }),
                state.bytes - state.entries[index].frame.readableBytes + size <= limit
            {
                state.bytes += size - state.entries[index].frame.readableBytes
                state.entries[index].frame = frame
                return (.conflated, nil, nil)
            }
            return Self.judgeSlow(&state)
        }
        waiter?.resume()
        abort?()
        drain?.schedule()
        return result
    }

    /// Hands the frames to `writer` from now on; frames already queued go at once.
    func attach(_ writer: SocketWriter) {
        let schedule = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            state.socketWriter = writer
            guard !state.socketDrainScheduled, state.entries.first.map({ $0.close == nil }) == true else { return false }
            state.socketDrainScheduled = true
            return true
        }
        if schedule { writer.schedule() }
    }

    /// Takes the frames queued ahead of any close, for the socket writer, and passes each to `write`.
    /// A close left at the head wakes the writer task, which performs it.
    func takeForSocket(_ write: (ByteBuffer) -> Void) {
        let (frames, waiter) = state.withLock { state -> ([ByteBuffer], CheckedContinuation<Void, Never>?) in
            var frames: [ByteBuffer] = []
            while let first = state.entries.first, first.close == nil {
                frames.append(first.frame)
                state.bytes -= first.frame.readableBytes
                state.entries.removeFirst()
            }
            state.stalledSince = nil
            state.socketDrainScheduled = false
            return (frames, state.entries.isEmpty ? nil : Self.takeWaiter(&state))
        }
        waiter?.resume()
        for frame in frames { write(frame) }
    }

    /// The socket closed under the socket writer: nothing more can be written.
    func socketGone() {
        finish()
    }

    /// Asks the writer to close the WebSocket. With `discardPending`, frames not yet written are dropped.
    /// The socket is cut outright a moment later if the close has not happened by then (a writer stuck on a
    /// full socket cannot send the close frame).
    func close(code: UInt16, reason: String, discardPending: Bool) {
        let (waiter, abort) = state.withLock { state -> (CheckedContinuation<Void, Never>?, (@Sendable () -> Void)?) in
            guard !state.closing && !state.finished else { return (nil, nil) }
            Self.queueClose(&state, code: code, reason: reason, discardPending: discardPending)
            defer { state.onAbort = nil }
            return (Self.takeWaiter(&state), state.onAbort)
        }
        waiter?.resume()
        abort?()
    }

    /// Cuts the socket through the abort handler, if it has not been used yet.
    func abort() {
        let abort = state.withLock { state -> (@Sendable () -> Void)? in
            defer { state.onAbort = nil }
            return state.onAbort
        }
        abort?()
    }

    /// Whether a close is queued and not yet taken by the writer.
    var hasPendingClose: Bool { state.withLock { state in state.entries.contains { $0.close != nil } } }

    /// Whether a close has been asked for.
    var isClosing: Bool { state.withLock { $0.closing || $0.finished } }

    /// Bytes queued now.
    var queuedBytes: Int { state.withLock { $0.bytes } }

    /// Stops the queue: the writer's next wait returns at once, and pushes are dropped.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.finished = true
            state.entries.removeAll()
            state.bytes = 0
            state.onAbort = nil
            state.socketWriter = nil
            return Self.takeWaiter(&state)
        }
        waiter?.resume()
    }

    /// Takes every queued entry without waiting (for inspection; the writer uses ``drain(into:)``).
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

    /// Moves every queued entry into `batch`, waiting while there are none.
    /// - Returns: `false` once the queue is finished and empty.
    func drain(into batch: inout Deque<Entry>) async -> Bool {
        while true {
            let ready = state.withLock { state -> Bool? in
                if state.socketWriter != nil {
                    // Frames are the socket writer's; the writer task takes a close once it reaches the head.
                    if let first = state.entries.first, first.close != nil {
                        batch.append(state.entries.removeFirst())
                        return true
                    }
                    return state.finished ? false : nil
                }
                if !state.entries.isEmpty {
                    swap(&batch, &state.entries)
                    state.bytes = 0
                    state.stalledSince = nil
                    return true
                }
                return state.finished ? false : nil
            }
            if let ready { return ready }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state -> Bool in
                        let work = state.socketWriter == nil ? !state.entries.isEmpty : state.entries.first?.close != nil
                        if work || state.finished || Task.isCancelled { return true }
                        state.waiter = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                self.finish()
            }
        }
    }

    private static func judgeSlow(_ state: inout State) -> (PushResult, CheckedContinuation<Void, Never>?, (@Sendable () -> Void)?) {
        queueClose(&state, code: CloseCode.slowConsumer, reason: "slow consumer: outbound queue full", discardPending: true)
        let abort = state.onAbort
        state.onAbort = nil
        return (.overflowed, takeWaiter(&state), abort)
    }

    private static func queueClose(_ state: inout State, code: UInt16, reason: String, discardPending: Bool) {
        if discardPending {
            state.entries.removeAll()
            state.bytes = 0
        }
        state.entries.append(Entry(frame: ByteBuffer(), positionChannel: nil, close: (code, reason)))
        state.closing = true
    }

    private static func takeWaiter(_ state: inout State) -> CheckedContinuation<Void, Never>? {
        defer { state.waiter = nil }
        return state.waiter
    }
}
