import NIOConcurrencyHelpers
import NIOCore

/// What the app (or, on Apple platforms, the library's own path monitor) tells a client about the device: the
/// network went away or came back, the app came to the foreground, reconnect now. Read by the client's run loop,
/// which it wakes when that loop is waiting between attempts or while offline.
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
        let timer: Scheduled<Void>
    }

    private struct State {
        var offline = false
        var nudge: Nudge?
        var running = false
        var sleeper: Sleeper?
        var nextSleeperID: UInt64 = 0
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

    /// Sleeps up to `duration`; the app's word (or cancellation) ends it early. Timed by an event loop's timer, not
    /// a task of its own.
    func nap(_ duration: Duration) async {
        let nanoseconds = max(0, duration.components.seconds) * 1_000_000_000 + max(0, duration.components.attoseconds) / 1_000_000_000
        let id = state.withLockedValue { state -> UInt64 in
            state.nextSleeperID += 1
            return state.nextSleeperID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let asleep = state.withLockedValue { state -> Bool in
                    // Cancelled before it slept: the cancellation handler found no sleeper to wake.
                    if Task.isCancelled { return false }
                    // Scheduled under the lock, so the timer cannot fire before the sleeper is in place.
                    let timer = timers.scheduleTask(in: .nanoseconds(nanoseconds)) { [weak self] () -> Void in self?.wake(id) }
                    state.sleeper = Sleeper(id: id, continuation: continuation, timer: timer)
                    return true
                }
                if !asleep { continuation.resume() }
            }
        } onCancel: {
            wake(id)
        }
    }

    /// Changes the state and wakes the run loop if it naps.
    private func tell(_ change: (inout State) -> Void) {
        let sleeper = state.withLockedValue { state -> Sleeper? in
            change(&state)
            defer { state.sleeper = nil }
            return state.sleeper
        }
        sleeper?.timer.cancel()
        sleeper?.continuation.resume()
    }

    /// Wakes the nap `id`, if it still sleeps.
    private func wake(_ id: UInt64) {
        let sleeper = state.withLockedValue { state -> Sleeper? in
            guard let sleeper = state.sleeper, sleeper.id == id else { return nil }
            state.sleeper = nil
            return sleeper
        }
        sleeper?.timer.cancel()
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
}
