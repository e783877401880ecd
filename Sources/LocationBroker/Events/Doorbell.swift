import BrokerCore

/// Wakes one waiting task early: the dispatcher sleeps until its next tick or until the writer stored events.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiting: CheckedContinuation<Void, Never>?
    }
    private let state = LockedValue(State())

    func ring() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.rung = true
            defer { state.waiting = nil }
            return state.waiting
        }?.resume()
    }

    /// Returns when rung (since the last wait) or after `limit`, whichever comes first, or when cancelled.
    func wait(limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let ready = self.state.withLock { state -> Bool in
                            if state.rung || Task.isCancelled {
                                state.rung = false
                                return true
                            }
                            state.waiting = continuation
                            return false
                        }
                        if ready { continuation.resume() }
                    }
                } onCancel: {
                    self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                        defer { state.waiting = nil }
                        return state.waiting
                    }?.resume()
                }
            }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
        state.withLock { $0.rung = false }
    }
}
