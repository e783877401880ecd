import BrokerCore
import BrokerStorage
import Logging

/// Logs failed delivery attempts at warning, at most one line per route per minute: a receiver that is down for
/// an hour makes sixty lines, not one per event and retry. A line says the route, the event's type and the reason
/// (``DeliveryFailureText``: the kind of failure and the receiver's origin, never its path, a secret, a coordinate or
/// an e-mail), and how many failures the minute before it left unsaid.
final class DeliveryFailureLog: Sendable {
    private struct Window {
        var lastLoggedAt: Int64?
        var unsaid = 0
    }

    private let logger: Logger
    private let clock: WallClock
    private let intervalMilliseconds: Int64
    private let windows = LockedValue<[OutboxRoute: Window]>([:])

    init(logger: Logger, clock: WallClock, intervalMilliseconds: Int64 = 60_000) {
        self.logger = logger
        self.clock = clock
        self.intervalMilliseconds = intervalMilliseconds
    }

    /// A failed attempt to deliver an event of `type` on `route`; `outcome` says what becomes of it.
    func failed(route: OutboxRoute, type: String, reason: String, outcome: String) {
        let now = clock.now()
        let unsaid: Int? = windows.withLock { windows in
            var window = windows[route] ?? Window()
            defer { windows[route] = window }
            if let last = window.lastLoggedAt, now - last < intervalMilliseconds {
                window.unsaid += 1
                return nil
            }
            let unsaid = window.unsaid
            window = Window(lastLoggedAt: now, unsaid: 0)
            return unsaid
        }
        guard let unsaid else { return }
        logger.warning(
            "a delivery failed",
            metadata: [
                "route": "\(route.rawValue)", "type": "\(type)", "reason": "\(reason)", "outcome": "\(outcome)",
                "unlogged_failures": "\(unsaid)",
            ])
    }
}
