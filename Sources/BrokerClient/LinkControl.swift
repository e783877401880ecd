import NIOConcurrencyHelpers

/// What the app (or, on Apple platforms, the library's own path monitor) tells a client about the device: the
/// network went away or came back, the app came to the foreground, reconnect now. Read by the client's run loop
/// at its next tick.
final class LinkControl: Sendable {
    /// A reason to try the connection again now.
    enum Nudge: Sendable, Equatable {
        /// The network came back, or the app came to the foreground: replace a connection that went silent, or
        /// attempt at once if there is none.
        case connectivity
        /// The app asked: drop the connection, if any, and connect again.
        case reconnect
    }

    private struct State {
        var offline = false
        var nudge: Nudge?
        var running = false
    }

    private let state = NIOLockedValueBox(State())

    /// Whether the device has no network now: no attempts, no token calls.
    var offline: Bool { state.withLockedValue { $0.offline } }

    func networkLost() {
        state.withLockedValue { $0.offline = true }
    }

    func networkAvailable() {
        state.withLockedValue {
            $0.offline = false
            if $0.nudge == nil { $0.nudge = .connectivity }
        }
    }

    func foreground() {
        state.withLockedValue { if $0.nudge == nil { $0.nudge = .connectivity } }
    }

    func reconnect() {
        state.withLockedValue { $0.nudge = .reconnect }
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
