
/// A first-come, first-served lock for async code: holders may await while holding it.
///
/// Used to serialise the changes to one donation (store write, then gate update) without blocking a thread.
/// A task cancelled while it waits for the lock stops waiting and throws `CancellationError`, so that a stuck
/// holder never keeps a shutdown waiting on everyone queued behind it.
package final class AsyncLock: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var held = false
        var nextID: UInt64 = 0
        var waiters: [Waiter] = []
    }

    private enum Acquiring {
        case acquired, waiting, cancelled
    }

    private let state = LockedValue(State())

    package init() {}

    /// Runs `body` while holding the lock.
    /// - Throws: `CancellationError` when the task is cancelled before it gets the lock; what `body` throws.
    package func withLock<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Under the lock, so that a cancellation either finds this waiter queued or is seen here.
                let acquiring = state.withLock { state -> Acquiring in
                    if Task.isCancelled { return .cancelled }
                    if !state.held {
                        state.held = true
                        return .acquired
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return .waiting
                }
                switch acquiring {
                case .acquired: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .waiting: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    private func release() {
        let next = state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst()  // ownership passes straight to the next waiter
        }
        next?.continuation.resume()
    }
}
