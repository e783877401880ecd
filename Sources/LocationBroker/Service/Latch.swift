import NIOConcurrencyHelpers
import ServiceLifecycle

/// A one-way gate: tasks wait until it is opened once, then pass forever.
final class Latch: Sendable {
    private struct State {
        var open = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = NIOLockedValueBox(State())

    init() {}

    /// Opens the gate and releases every waiter.
    func open() {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Waits until the gate is open.
    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLockedValue { state -> Bool in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if isOpen { continuation.resume() }
        }
    }
}

/// Runs `service` only once `latch` opens: in a cluster the HTTP/WebSocket server starts once the node listens
/// to the other nodes, so no client is served a node that would miss what the others publish.
struct StartsWhenOpen: Service {
    let latch: Latch
    let service: any Service

    package func run() async throws {
        let opened = await cancelWhenGracefulShutdown {
            await latch.wait()
            return !Task.isCancelled
        }
        guard opened, !Task.isCancelled else { return }
        try await service.run()
    }
}
