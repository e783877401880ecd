import BrokerCore

/// A held poll's sink in the hub: it keeps no frame (the answer is read from the channel's history, which holds
/// every position the caller may see) and only wakes the poll, at once, whenever the hub writes to it: a
/// position kept, a donation that changed, a close asked for (shutdown, an expired token). Its other wakers are
/// the hold's deadline and the client's socket closing.
///
/// A wake that comes while nobody waits is remembered, so the poll never sleeps past news.
package final class PollWaker: FrameSink {
    private struct State {
        var woken = false
        var closing = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = LockedValue(State())

    package init() {}

    /// Wakes the poll (or the next ``wait()``).
    package func wake() {
        // A waiter takes the wake; with none, it is remembered for the next wait.
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.woken = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at the first wake since the previous return (at once if one came meanwhile).
    package func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.woken {
                    state.woken = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    // MARK: FrameSink

    package func enqueue(_ frame: PreparedFrame, conflationKey: String?) -> EnqueueResult {
        if isClosing { return .closed }
        wake()
        return .queued
    }

    package func discardQueued(conflationKey: String) { wake() }

    package func close(code: UInt16, reason: String, discardPending: Bool) {
        state.withLock { $0.closing = true }
        wake()
    }

    package func abort() { close(code: 0, reason: "", discardPending: true) }

    package func finish() { close(code: 0, reason: "", discardPending: true) }

    package var isClosing: Bool { state.withLock { $0.closing } }

    package var queuedBytes: Int { 0 }
}
