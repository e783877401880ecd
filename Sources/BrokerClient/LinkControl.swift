import NIOConcurrencyHelpers
import NIOCore

/// What the app (or, on Apple platforms, the library's own path monitor) tells a client about the device: the
/// network went away or came back, the app came to the foreground, reconnect now. Read by the client's run loop,
/// which it wakes wherever that loop waits: between attempts, while offline, or on an open connection (through the
/// hook ``serving(_:)`` sets). The loop sleeps until its next deadline, however far, so a word that came must
/// wake it: nothing polls.
final class LinkControl: Sendable {
    /// A reason to try the connection again now.
    enum Nudge: Sendable, Equatable {
        /// The network came back, or the app came to the foreground: replace a connection that went silent, or
        /// attempt at once if there is none.
        case connectivity
        /// The app asked: drop the connection, if any, and connect again.
        case reconnect
    }

    /// The run loop, napping until a deadline or a word from the app.
    private struct Sleeper {
        let id: UInt64
        let continuation: CheckedContinuation<Void, Never>
        /// `nil`: no deadline, only a word or cancellation ends the nap.
        let timer: Scheduled<Void>?
    }

    private struct State {
        var offline = false
        var nudge: Nudge?
        var running = false
        var sleeper: Sleeper?
        var nextSleeperID: UInt64 = 0
        /// Wakes the loop while it waits on an open connection.
        var wakeServing: (@Sendable () -> Void)?
        /// A word came while the loop was not napping: its next nap ends at once, so a word that comes between the
        /// loop's last look at the state and its nap is not slept through.
        var wokenBeforeNap = false
    }

    private let state = NIOLockedValueBox(State())
    private let timers: any EventLoop

    init(timers: any EventLoop = WebSocketTransport.timerLoop()) {
        self.timers = timers
    }

    /// Whether the device has no network now: no attempts, no token calls.
    var offline: Bool { state.withLockedValue { $0.offline } }

    func networkLost() {
        tell { $0.offline = true }
    }

    func networkAvailable() {
        tell {
            $0.offline = false
            if $0.nudge == nil { $0.nudge = .connectivity }
        }
    }

    func foreground() {
        tell { if $0.nudge == nil { $0.nudge = .connectivity } }
    }

    func reconnect() {
        tell { $0.nudge = .reconnect }
    }

    /// While the loop waits on an open connection, `wake` is how a word reaches it (`nil` once it no longer does).
    func serving(_ wake: (@Sendable () -> Void)?) {
        state.withLockedValue { $0.wakeServing = wake }
    }

    /// Wakes the loop waiting on an open connection without a word: its owner has a new deadline (a fix was sent
    /// and its ack is now awaited).
    func wakeServing() {
        state.withLockedValue { $0.wakeServing }?()
    }

    /// Sleeps until `deadline` (`nil`: no deadline); the app's word (or cancellation) ends it early. Timed by an
    /// event loop's timer, not a task of its own.
    func nap(until deadline: ContinuousClock.Instant?) async {
        let nanoseconds = deadline.map { Self.nanoseconds($0 - .now) }
        let id = state.withLockedValue { state -> UInt64 in
            state.nextSleeperID += 1
            return state.nextSleeperID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let asleep = state.withLockedValue { state -> Bool in
                    // Cancelled before it slept: the cancellation handler found no sleeper to wake.
                    if Task.isCancelled { return false }
                    if state.wokenBeforeNap {
                        state.wokenBeforeNap = false
                        return false
                    }
                    // Scheduled under the lock, so the timer cannot fire before the sleeper is in place.
                    let timer = nanoseconds.map { timers.scheduleTask(in: .nanoseconds($0)) { [weak self] () -> Void in self?.wake(id) } }
                    state.sleeper = Sleeper(id: id, continuation: continuation, timer: timer)
                    return true
                }
                if !asleep { continuation.resume() }
            }
        } onCancel: {
            wake(id)
        }
    }

    /// Changes the state and wakes the run loop, wherever it waits.
    private func tell(_ change: (inout State) -> Void) {
        let (sleeper, wakeServing) = state.withLockedValue { state -> (Sleeper?, (@Sendable () -> Void)?) in
            change(&state)
            if state.sleeper == nil { state.wokenBeforeNap = true }
            defer { state.sleeper = nil }
            return (state.sleeper, state.wakeServing)
        }
        sleeper?.timer?.cancel()
        sleeper?.continuation.resume()
        wakeServing?()
    }

    /// Wakes the nap `id`, if it still sleeps.
    private func wake(_ id: UInt64) {
        let sleeper = state.withLockedValue { state -> Sleeper? in
            guard let sleeper = state.sleeper, sleeper.id == id else { return nil }
            state.sleeper = nil
            return sleeper
        }
        sleeper?.timer?.cancel()
        sleeper?.continuation.resume()
    }

    /// The nudge waiting, if any; taken once.
    func takeNudge() -> Nudge? {
        state.withLockedValue { state in
            defer { state.nudge = nil }
            return state.nudge
        }
    }

    /// Marks the client as running; `false` when it already was (a second `run()` is refused).
    func claimRun() -> Bool {
        state.withLockedValue { state in
            if state.running { return false }
            state.running = true
            return true
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds < Int64.max / 1_000_000_000 else { return Int64.max / 2 }
        return max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
    }
}
