import BrokerProtocol
import DequeModule
import NIOConcurrencyHelpers
import NIOCore

/// The events of one connection, between the task that reads the socket and whoever reads them with a time limit.
///
/// **Capacity:** at most ``limit`` unread events, plus the one terminal `closed` event.
///
/// **When full**, what a reader of a donation or of a publisher needs is kept:
/// - the oldest unread `position` frame is dropped for the new event, and counted (``droppedPositions``): a reader
///   that fell behind a moving volunteer wants where they are now, and the trail keeps the newer fixes;
/// - with no unread position to drop (the queue holds acks, state changes, errors: frames a reader must not miss),
///   the queue ends with a `closed` event instead. The owner then leaves the socket and connects again, resuming
///   from the last seq it read, which loses nothing.
/// - A `closed` event is never dropped, and nothing is queued after it.
///
/// Any number of readers may wait at once; they are served in the order they came. A wait ends with an event, at
/// its deadline (a wait may have none), when the queue is over and drained, when ``interrupt()`` is called, or when
/// its task is cancelled. All the waits of a queue share one timer, set for the earliest deadline: a reader that
/// waits again and again does not schedule one per wait.
final class EventQueue: Sendable {
    private struct Waiter {
        let id: UInt64
        /// `nil`: none; only an event, the end, an interruption or cancellation ends the wait.
        let deadline: NIODeadline?
        let continuation: CheckedContinuation<BrokerEvent?, Never>
    }

    private struct State {
        var events = Deque<BrokerEvent>()
        /// How many of `events` are position frames: whether one can be dropped.
        var unreadPositions = 0
        /// In the order they came; only while `events` is empty.
        var waiters = Deque<Waiter>()
        var finished = false
        var nextWaiterID: UInt64 = 0
        var droppedPositions = 0
        /// The one timer of the queue, and the deadline it is set for.
        var timer: (deadline: NIODeadline, scheduled: Scheduled<Void>)?
        /// ``interrupt()`` came while nobody waited: the next wait ends at once, so the word is not lost between a
        /// reader's last look at its state and its wait.
        var interrupted = false
    }

    /// How many events may wait unread (besides a final `closed`).
    let limit: Int
    private let timers: any EventLoop
    private let state = NIOLockedValueBox(State())

    init(limit: Int = 4096, timers: any EventLoop = WebSocketTransport.timerLoop()) {
        self.limit = max(1, limit)
        self.timers = timers
    }

    /// Whether the queue ended (finished, or full of events that may not be dropped).
    var isFinished: Bool { state.withLockedValue { $0.finished } }

    /// How many position frames were dropped unread because the reader fell ``limit`` events behind.
    var droppedPositions: Int { state.withLockedValue { $0.droppedPositions } }

    /// How many events wait unread.
    var count: Int { state.withLockedValue { $0.events.count } }

    /// How many readers wait for an event.
    var waitingReaders: Int { state.withLockedValue { $0.waiters.count } }

    /// Adds an event, by the rules above when the queue is full.
    func push(_ event: BrokerEvent) {
        let waiter = state.withLockedValue { state -> Waiter? in
            guard !state.finished else { return nil }
            if let waiter = state.waiters.popFirst() { return waiter }
            if case .closed = event {
                state.events.append(event)
                return nil
            }
            if state.events.count >= limit {
                guard state.unreadPositions > 0, let oldest = state.events.firstIndex(where: Self.isPosition) else {
                    state.events.append(.closed(code: nil, reason: "the client fell behind: \(limit) events unread"))
                    state.finished = true
                    return nil
                }
                state.events.remove(at: oldest)
                state.unreadPositions -= 1
                state.droppedPositions += 1
            }
            state.events.append(event)
            if Self.isPosition(event) { state.unreadPositions += 1 }
            return nil
        }
        waiter?.continuation.resume(returning: event)
    }

    /// No more events will come; waiting readers get `nil`, later ones too once the queue is drained.
    func finish() {
        let waiters = state.withLockedValue { state -> Deque<Waiter> in
            state.finished = true
            state.timer?.scheduled.cancel()
            state.timer = nil
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    /// The next event, or `nil` when none came within `timeout`, none will ever come, or the task was cancelled.
    func next(timeout: Duration) async -> BrokerEvent? {
        await next(until: NIODeadline.now() + .nanoseconds(Self.nanoseconds(timeout)))
    }

    /// Ends the waits in progress with `nil`, or, when nobody waits, the next wait: the reader has something to look
    /// at besides the socket (the app's word, a new deadline).
    func interrupt() {
        let waiters = state.withLockedValue { state -> Deque<Waiter> in
            guard !state.waiters.isEmpty else {
                state.interrupted = true
                return []
            }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    /// The next event, or `nil` when none came by `deadline` (`nil`: no deadline), none will ever come, the wait was
    /// interrupted, or the task was cancelled.
    func next(until deadline: NIODeadline?) async -> BrokerEvent? {
        let start = state.withLockedValue { state -> Start in
            guard state.events.isEmpty, !state.finished else { return .take }
            if state.interrupted {
                state.interrupted = false
                return .interrupted
            }
            state.nextWaiterID += 1
            return .wait(state.nextWaiterID)
        }
        let id: UInt64
        switch start {
        case .take: return state.withLockedValue { Self.take(&$0) }
        case .interrupted: return nil
        case .wait(let waiter): id = waiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<BrokerEvent?, Never>) in
                let ready = state.withLockedValue { state -> BrokerEvent?? in
                    if !state.events.isEmpty || state.finished { return .some(Self.take(&state)) }
                    if state.interrupted {
                        state.interrupted = false
                        return .some(nil)
                    }
                    // Cancelled before the wait was in place: the cancellation handler found nothing to end.
                    if Task.isCancelled { return .some(nil) }
                    state.waiters.append(Waiter(id: id, deadline: deadline, continuation: continuation))
                    if let deadline { armTimer(&state, for: deadline) }
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            end(waiter: id)
        }
    }

    /// How a call to ``next(until:)`` begins.
    private enum Start {
        case take
        case interrupted
        case wait(UInt64)
    }

    private static func take(_ state: inout State) -> BrokerEvent? {
        guard let event = state.events.popFirst() else { return nil }
        if isPosition(event) { state.unreadPositions -= 1 }
        return event
    }

    private static func isPosition(_ event: BrokerEvent) -> Bool {
        if case .frame(.position, _) = event { return true }
        return false
    }

    /// Ends one wait with `nil` (its task was cancelled).
    private func end(waiter id: UInt64) {
        let ended = state.withLockedValue { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        ended?.continuation.resume(returning: nil)
    }

    /// Sets the queue's timer for `deadline` unless it already goes off sooner. Under the lock, so the timer cannot
    /// go off before the wait it is for is in place.
    private func armTimer(_ state: inout State, for deadline: NIODeadline) {
        if let timer = state.timer, timer.deadline <= deadline { return }
        state.timer?.scheduled.cancel()
        let scheduled = timers.scheduleTask(deadline: deadline) { [weak self] () -> Void in self?.expire() }
        state.timer = (deadline, scheduled)
    }

    /// Ends the waits whose deadline has passed, and sets the timer for the next one.
    private func expire() {
        let expired = state.withLockedValue { state -> [Waiter] in
            state.timer = nil
            let now = NIODeadline.now()
            var expired: [Waiter] = []
            var waiting = Deque<Waiter>()
            for waiter in state.waiters {
                if let deadline = waiter.deadline, deadline <= now { expired.append(waiter) } else { waiting.append(waiter) }
            }
            state.waiters = waiting
            if let next = waiting.compactMap(\.deadline).min() { armTimer(&state, for: next) }
            return expired
        }
        for waiter in expired { waiter.continuation.resume(returning: nil) }
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds < Int64.max / 1_000_000_000 else { return Int64.max / 2 }
        return max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
    }
}
