import DequeModule
import NIOConcurrencyHelpers
import NIOCore

/// The events of one connection, for one reader that waits with a time limit.
///
/// Bounded: a reader that leaves more than ``limit`` events unread has fallen behind for good, so the queue ends
/// with a `closed` event (the owner then cuts the socket and reconnects) instead of growing without limit. A timed
/// wait is a timer on an event loop, not a task of its own.
final class EventQueue: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<BrokerEvent?, Never>
        let timer: Scheduled<Void>?
    }

    private struct State {
        var events = Deque<BrokerEvent>()
        var waiter: Waiter?
        var finished = false
        var nextWaiterID: UInt64 = 0
    }

    /// How many events may wait unread.
    let limit: Int
    private let timers: any EventLoop
    private let state = NIOLockedValueBox(State())

    init(limit: Int = 4096, timers: any EventLoop = WebSocketTransport.timerLoop()) {
        self.limit = max(1, limit)
        self.timers = timers
    }

    /// Whether the queue ended (finished, or overflowed).
    var isFinished: Bool { state.withLockedValue { $0.finished } }

    /// Adds an event; when the reader is `limit` events behind, the queue ends with a `closed` event instead.
    func push(_ event: BrokerEvent) {
        let waiter = state.withLockedValue { state -> Waiter? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            if state.events.count >= limit {
                state.events.append(.closed(code: nil, reason: "the client fell behind: \(limit) events unread"))
                state.finished = true
            } else {
                state.events.append(event)
            }
            return nil
        }
        waiter?.timer?.cancel()
        waiter?.continuation.resume(returning: event)
    }

    /// No more events will come; a waiting reader gets `nil` once the queue is drained.
    func finish() {
        let waiter = state.withLockedValue { state -> Waiter? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.timer?.cancel()
        waiter?.continuation.resume(returning: nil)
    }

    /// The next event, or `nil` when none came within `timeout` or none will ever come.
    func next(timeout: Duration) async -> BrokerEvent? {
        if let ready = state.withLockedValue({ $0.events.popFirst() }) { return ready }
        return await withCheckedContinuation { (continuation: CheckedContinuation<BrokerEvent?, Never>) in
            let ready = state.withLockedValue { state -> BrokerEvent?? in
                if let event = state.events.popFirst() { return .some(event) }
                if state.finished { return .some(nil) }
                state.nextWaiterID += 1
                let id = state.nextWaiterID
                // Scheduled under the lock, so the expiry cannot run before the waiter is in place.
                let timer = timers.scheduleTask(in: .nanoseconds(Self.nanoseconds(timeout))) { [weak self] () -> Void in self?.expire(id) }
                state.waiter = Waiter(id: id, continuation: continuation, timer: timer)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func expire(_ id: UInt64) {
        let expired = state.withLockedValue { state -> Waiter? in
            guard let waiter = state.waiter, waiter.id == id else { return nil }
            state.waiter = nil
            return waiter
        }
        expired?.continuation.resume(returning: nil)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
    }
}
