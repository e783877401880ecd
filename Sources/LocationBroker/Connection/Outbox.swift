import BrokerProtocol
import DequeModule
import NIOCore
import Synchronization

/// A connection's bounded outbound queue: producers (the hub, the connection's own reader) push without
/// waiting; the connection's writer task drains it.
///
/// Bounded in bytes. When a position does not fit, the queued position of the same channel is replaced by
/// the newer one (conflation: only the newest position matters). When nothing can be conflated the consumer
/// is too slow: the queue is discarded and the connection is closed with 4008.
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
        /// Did not fit: the connection is now closing with 4008.
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
    }

    private let state = Mutex(State())
    /// The byte limit of queued frames.
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Queues a frame without waiting. Pass `positionChannel` for position frames so they can be conflated.
    @discardableResult
    func push(_ frame: ByteBuffer, positionChannel: String? = nil) -> PushResult {
        let size = frame.readableBytes
        let (result, waiter) = state.withLock { state -> (PushResult, CheckedContinuation<Void, Never>?) in
            if state.closing || state.finished { return (.closed, nil) }
            if state.bytes + size <= limit {
                state.entries.append(Entry(frame: frame, positionChannel: positionChannel))
                state.bytes += size
                return (.queued, Self.takeWaiter(&state))
            }
            if let channel = positionChannel,
                let index = state.entries.lastIndex(where: { $0.positionChannel == channel }),
                state.bytes - state.entries[index].frame.readableBytes + size <= limit
            {
                state.bytes += size - state.entries[index].frame.readableBytes
                state.entries[index].frame = frame
                return (.conflated, nil)
            }
            Self.queueClose(&state, code: CloseCode.slowConsumer, reason: "slow consumer: outbound queue full", discardPending: true)
            return (.overflowed, Self.takeWaiter(&state))
        }
        waiter?.resume()
        return result
    }

    /// Asks the writer to close the WebSocket. With `discardPending`, frames not yet written are dropped.
    func close(code: UInt16, reason: String, discardPending: Bool) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.closing && !state.finished else { return nil }
            Self.queueClose(&state, code: code, reason: reason, discardPending: discardPending)
            return Self.takeWaiter(&state)
        }
        waiter?.resume()
    }

    /// Whether a close is queued and not yet taken by the writer.
    var hasPendingClose: Bool { state.withLock { state in state.entries.contains { $0.close != nil } } }

    /// Whether a close has been asked for.
    var isClosing: Bool { state.withLock { $0.closing || $0.finished } }

    /// Stops the queue: the writer's next wait returns at once, and pushes are dropped.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.finished = true
            state.entries.removeAll()
            state.bytes = 0
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
            }
            return state.entries
        }
    }

    /// Moves every queued entry into `batch`, waiting while there are none.
    /// - Returns: `false` once the queue is finished and empty.
    func drain(into batch: inout Deque<Entry>) async -> Bool {
        while true {
            let ready = state.withLock { state -> Bool? in
                if !state.entries.isEmpty {
                    swap(&batch, &state.entries)
                    state.bytes = 0
                    return true
                }
                return state.finished ? false : nil
            }
            if let ready { return ready }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state -> Bool in
                        if !state.entries.isEmpty || state.finished || Task.isCancelled { return true }
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
