import DequeModule
import Synchronization

/// A queue of events with one async reader that can wait with a time limit.
final class EventQueue: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<BrokerEvent?, Never>
    }

    private struct State {
        var events = Deque<BrokerEvent>()
        var waiter: Waiter?
        var finished = false
        var nextWaiterID: UInt64 = 0
    }

    private let state = Mutex(State())

    func push(_ event: BrokerEvent) {
        let waiter = state.withLock { state -> Waiter? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.events.append(event)
            return nil
        }
        waiter?.continuation.resume(returning: event)
    }

    /// No more events will come; a waiting reader gets `nil`.
    func finish() {
        let waiter = state.withLock { state -> Waiter? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.continuation.resume(returning: nil)
    }

    /// The next event, or `nil` when none came within `timeout` or none will ever come.
    func next(timeout: Duration) async -> BrokerEvent? {
        if let ready = state.withLock({ $0.events.popFirst() }) { return ready }
        return await withCheckedContinuation { (continuation: CheckedContinuation<BrokerEvent?, Never>) in
            let outcome = state.withLock { state -> (BrokerEvent?, Bool, UInt64) in
                if let event = state.events.popFirst() { return (event, true, 0) }
                if state.finished { return (nil, true, 0) }
                state.nextWaiterID += 1
                state.waiter = Waiter(id: state.nextWaiterID, continuation: continuation)
                return (nil, false, state.nextWaiterID)
            }
            if outcome.1 {
                continuation.resume(returning: outcome.0)
                return
            }
            let id = outcome.2
            Task {
                try? await Task.sleep(for: timeout)
                let expired = self.state.withLock { state -> Waiter? in
                    guard let waiter = state.waiter, waiter.id == id else { return nil }
                    state.waiter = nil
                    return waiter
                }
                expired?.continuation.resume(returning: nil)
            }
        }
    }
}
