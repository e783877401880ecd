import Logging

/// The one reconnect loop of the Swift client, shared by ``DonationWatcher`` and ``VolunteerPublisher``: follows
/// ``ConnectionStateMachine``'s actions (wait, connect, stop), parks while the device is offline, answers the
/// app's nudges (network back, foreground, reconnect now), and tells its owner when an open connection must go.
///
/// The owner asks ``nextConnection(announce:due:idle:)`` for a connection, serves it, checks it with
/// ``check(_:)`` whenever it wakes, and reports its end with ``lost(_:immediately:)``.
///
/// Nothing here wakes on a period: every wait lasts until the earliest instant something is due (the backoff's
/// end, the machine's ``ConnectionStateMachine/nextDeadline``, the owner's own `due`), or until a word from the app
/// (``LinkControl``), which also interrupts the owner's wait on an open connection.
struct LinkSupervisor {
    /// What ``nextConnection(announce:due:idle:)`` gives.
    enum Step {
        /// A connection opened; its `welcome` is still to come.
        case opened(BrokerConnection)
        /// The rules say to stop: why, and the ending that made it so.
        case stop(reason: String, ending: ConnectionStateMachine.Ending)
        /// The task was cancelled.
        case cancelled
    }

    /// Why an open connection must go, from ``check(_:)``.
    struct Verdict {
        var ending: ConnectionStateMachine.Ending
        /// Connect again at once (within the attempt gap) rather than after a backoff delay.
        var immediately: Bool
    }

    private(set) var machine: ConnectionStateMachine
    private var connector: ReconnectingConnector
    private let control: LinkControl
    private let logger: Logger
    private var action: ConnectionStateMachine.Action

    init(machine: ConnectionStateMachine, connector: ReconnectingConnector, control: LinkControl, logger: Logger) {
        self.machine = machine
        self.connector = connector
        self.control = control
        self.logger = logger
        action = .none
    }

    /// When the open connection must be looked at even if nothing arrives: the `welcome` deadline, if still awaited.
    var nextDeadline: ContinuousClock.Instant? { machine.nextDeadline }

    /// Waits as the rules say (and while offline), then connects; `announce` hears of every wait and of going
    /// offline. `due` tells when the owner next has something to do while no connection is open (a position growing
    /// stale on a screen; `nil`: nothing), and `idle` is called when a wait wakes, to do it.
    mutating func nextConnection(
        announce: (ConnectionChange) -> Void, due: () -> ContinuousClock.Instant?, idle: () -> Void
    ) async -> Step {
        control.serving(nil)
        if case .idle = machine.phase { action = machine.start() }
        var announcedOffline = false
        while !Task.isCancelled {
            if control.offline {
                if !announcedOffline { announce(.offline) }
                announcedOffline = true
                await control.nap(until: due())
                idle()
                continue
            }
            switch action {
            case .none, .closeDead:
                // Not reachable between connections (there is none to close): take it as a lost one.
                action = machine.ended(.dead("internal: no next step"), now: .now)
            case .stop(let reason, let ending):
                return .stop(reason: reason, ending: ending)
            case .wait(let delay, let attempt, let reason):
                logger.info("reconnecting", metadata: ["in": "\(delay)", "attempt": "\(attempt)", "reason": "\(reason)"])
                announce(.reconnecting(delay: delay, attempt: attempt, reason: reason))
                action = await wait(delay, due: due, idle: idle)
            case .connect(let keepalive, let renew):
                // A nudge that came meanwhile is answered by this attempt.
                _ = control.takeNudge()
                machine.attempting(now: .now)
                switch await connector.open(keepalive: keepalive, renewToken: renew) {
                case .opened(let connection):
                    machine.opened(now: .now)
                    control.serving { connection.interruptWait() }
                    return .opened(connection)
                case .failed(let ending):
                    action = machine.ended(ending, now: .now)
                }
            }
        }
        return .cancelled
    }

    /// Waits `delay`; the network coming back or a nudge cuts it short, going offline leaves it to the caller.
    private mutating func wait(
        _ delay: Duration, due: () -> ContinuousClock.Instant?, idle: () -> Void
    ) async -> ConnectionStateMachine.Action {
        let end = ContinuousClock.now + delay
        while !Task.isCancelled, ContinuousClock.now < end {
            // Offline: the caller parks; the rest of the wait resumes after, unless the network's return cuts it.
            if control.offline { return .wait(delay: end - .now, attempt: machine.failures, reason: "no network") }
            if control.takeNudge() != nil {
                let next = machine.connectivityReturned(now: .now)
                if case .wait(let remaining, _, _) = next, remaining >= end - .now { continue }
                return next
            }
            await control.nap(until: due().map { Swift.min($0, end) } ?? end)
            idle()
        }
        return machine.delayElapsed()
    }

    /// The socket opened and `welcome` came with this heartbeat.
    mutating func welcomed(heartbeatSeconds: Int) {
        machine.welcomed(heartbeatSeconds: heartbeatSeconds)
    }

    /// Whenever the owner wakes on an open connection: whether it must go (no `welcome` in time, the network went away, a
    /// nudge found it silent, or the app asked to reconnect).
    mutating func check(_ connection: BrokerConnection) -> Verdict? {
        let now = ContinuousClock.now
        if case .closeDead(let reason) = machine.tick(now: now) { return Verdict(ending: .dead(reason), immediately: false) }
        if control.offline { return Verdict(ending: .dead("the network went away"), immediately: false) }
        switch control.takeNudge() {
        case .reconnect?:
            return Verdict(ending: .dead("the app asked to reconnect"), immediately: true)
        case .connectivity? where now - connection.lastReceived > machine.policy.silenceBeforeReplacing:
            return Verdict(ending: .dead("silent for more than \(machine.policy.silenceBeforeReplacing) when the network came back"), immediately: true)
        default:
            return nil
        }
    }

    /// The open connection ended (after ``check(_:)`` or by itself).
    mutating func lost(_ ending: ConnectionStateMachine.Ending, immediately: Bool = false) {
        control.serving(nil)
        logger.info("connection lost", metadata: ["reason": "\(ConnectionStateMachine.describe(ending))"])
        action = machine.ended(ending, now: .now)
        if immediately, case .wait = action { action = machine.connectivityReturned(now: .now) }
    }

    /// The owner stops for good.
    mutating func stop() {
        control.serving(nil)
        machine.stop()
    }
}
