import BrokerCore

/// Takes the trip events the hub decides, under its locks, and holds them until ``EventWriter`` stores them.
///
/// Recording only appends to a bounded list and wakes the writer: the publish path never waits on the store.
/// A store that stays down long enough to fill the list loses the newest events, counted; the state events,
/// written with the donation change itself, are never among them.
final class EventRecorder: TrackingEventSink, Sendable {
    private struct State {
        var events: [TrackingEvent] = []
        var recorded: UInt64 = 0
        var written: UInt64 = 0
        var waiting: CheckedContinuation<Void, Never>?
        var flushes: [(id: UInt64, upTo: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
        var nextFlush: UInt64 = 0
    }

    private let state = LockedValue(State())
    /// The events held at most while the store cannot take them.
    let capacity: Int
    private let onDropped: @Sendable () -> Void

    init(capacity: Int = 10_000, onDropped: @escaping @Sendable () -> Void) {
        self.capacity = capacity
        self.onDropped = onDropped
    }

    func record(_ event: TrackingEvent) {
        let (accepted, wake) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            guard state.events.count < capacity else { return (false, nil) }
            state.events.append(event)
            state.recorded += 1
            defer { state.waiting = nil }
            return (true, state.waiting)
        }
        if !accepted { onDropped() }
        wake?.resume()
    }

    /// The events recorded since the last call, waiting for one if there is none (or returning empty when the
    /// task is cancelled).
    func next() async -> [TrackingEvent] {
        while !Task.isCancelled {
            let taken = state.withLock { state -> [TrackingEvent] in
                defer { state.events = [] }
                return state.events
            }
            if !taken.isEmpty { return taken }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let ready = state.withLock { state -> Bool in
                        if !state.events.isEmpty || Task.isCancelled { return true }
                        state.waiting = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                state.withLock { state -> CheckedContinuation<Void, Never>? in
                    defer { state.waiting = nil }
                    return state.waiting
                }?.resume()
            }
        }
        return []
    }

    /// The events recorded since the last call, without waiting.
    func nextIfAny() async -> [TrackingEvent] {
        state.withLock { state -> [TrackingEvent] in
            defer { state.events = [] }
            return state.events
        }
    }

    /// The writer stored (or gave up on) `count` more events.
    func noteWritten(_ count: Int) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.written += UInt64(count)
            let written = state.written
            let ready = state.flushes.filter { $0.upTo <= written }.map(\.continuation)
            state.flushes.removeAll { $0.upTo <= written }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// Waits until every event recorded before the call is stored, so that a donation change stored next comes
    /// after them in the outbox (a `first_position` before the `paused` that follows it). Waits at most
    /// `limit`: a change is never held up long by a store that cannot take events.
    func flush(limit: Duration = .seconds(2)) async {
        let id = state.withLock { state -> UInt64 in
            state.nextFlush += 1
            return state.nextFlush
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let done = self.state.withLock { state -> Bool in
                            if state.written >= state.recorded || Task.isCancelled { return true }
                            state.flushes.append((id, state.recorded, continuation))
                            return false
                        }
                        if done { continuation.resume() }
                    }
                } onCancel: {
                    self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                        guard let index = state.flushes.firstIndex(where: { $0.id == id }) else { return nil }
                        return state.flushes.remove(at: index).continuation
                    }?.resume()
                }
            }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
    }
}
