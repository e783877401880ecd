import Atomics
import BrokerProtocol

/// The open connections of this node, by id. Its lock is a leaf: the connections are copied out before any
/// of them is told anything.
package final class ConnectionRegistry: Sendable {
    private let connections = LockedValue<[UInt64: ClientConnection]>([:])
    private let nextID = ManagedAtomic<UInt64>(1)
    /// Tasks waiting for the last connection to go (a draining shutdown), by waiter id.
    private let emptyWaiters = LockedValue<[UInt64: CheckedContinuation<Void, Never>]>([:])

    init() {}

    /// A fresh connection id, unique within the process.
    func makeID() -> UInt64 { nextID.loadThenWrappingIncrement(by: 1, ordering: .relaxed) }

    func insert(_ connection: ClientConnection) {
        connections.withLock { $0[connection.id] = connection }
    }

    /// Forgets `connection`.
    /// - Returns: whether it was registered (a second call does nothing).
    func remove(_ connection: ClientConnection) -> Bool {
        let (removed, nowEmpty) = connections.withLock { ($0.removeValue(forKey: connection.id) != nil, $0.isEmpty) }
        if removed && nowEmpty { releaseEmptyWaiters() }
        return removed
    }

    /// Waits until no connection is open (at once if none is), at most until `deadline`, or until the task is
    /// cancelled.
    /// - Returns: whether none is open.
    func waitUntilEmpty(before deadline: ContinuousClock.Instant) async -> Bool {
        let id = makeID()
        let timer = Task { [self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            emptyWaiters.withLock { $0.removeValue(forKey: id) }?.resume()
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                emptyWaiters.withLock { $0[id] = continuation }
                // Checked after the waiter is registered, so that a last removal in between is never missed: it
                // either sees this waiter, or this check sees the registry empty.
                if count == 0 || Task.isCancelled { emptyWaiters.withLock { $0.removeValue(forKey: id) }?.resume() }
            }
        } onCancel: {
            emptyWaiters.withLock { $0.removeValue(forKey: id) }?.resume()
        }
        return count == 0
    }

    private func releaseEmptyWaiters() {
        let waiters = emptyWaiters.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            defer { waiters = [:] }
            return Array(waiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    /// Open connections.
    package var count: Int { connections.withLock { $0.count } }

    /// Whether the connection `id` is still open.
    package func contains(_ id: UInt64) -> Bool { connections.withLock { $0[id] != nil } }

    /// Every open connection, copied out of the lock.
    package var all: [ClientConnection] { connections.withLock { Array($0.values) } }

    /// Asks every connection to close with `code`, after the frames already queued.
    func closeAll(code: UInt16, reason: String) {
        for connection in all {
            connection.sink.close(code: code, reason: reason, discardPending: false)
        }
    }

    /// Closes with 4001 every connection whose token has expired at `nowSeconds` (tokens are accepted up to
    /// the verifiers' leeway after `exp`, so sockets live exactly as long).
    func closeExpired(nowSeconds: Int64) {
        for connection in all where connection.expiresAt + TokenLeeway.seconds <= nowSeconds {
            connection.sink.close(code: CloseCode.tokenExpired, reason: "token expired", discardPending: false)
        }
    }

    /// Cuts every connection still open, without a close handshake.
    func abortAll() {
        for connection in all { connection.sink.abort() }
    }
}
