
/// A one-way gate: tasks wait until it is opened once, then pass forever. A task cancelled while it waits stops
/// waiting at once.
package final class Latch: Sendable {
    private struct State {
        var open = false
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = LockedValue(State())

    package init() {}

    /// Opens the gate and releases every waiter.
    package func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    /// Whether the gate has been opened.
    package var isOpen: Bool { state.withLock { $0.open } }

    /// Waits until the gate is open, or the task is cancelled (then ``isOpen`` tells which).
    package func wait() async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Under the lock, so that a cancellation either finds this waiter or is seen here.
                let passNow = state.withLock { state -> Bool in
                    if state.open || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if passNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
