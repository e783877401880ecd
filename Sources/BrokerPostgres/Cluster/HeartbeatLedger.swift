import BrokerCore

/// The heartbeat this node's listener waits for, and how many unopenable payloads it logged.
final class HeartbeatLedger: Sendable {
    private struct State {
        var expected: UInt64 = 0
        var heard = false
        var rejectionsSeen = 0
    }

    private let state = LockedValue(State())

    func expect(_ nonce: UInt64) {
        state.withLock { $0 = State(expected: nonce, heard: false, rejectionsSeen: $0.rejectionsSeen) }
    }

    /// Records a heartbeat heard; `false` for one not expected (an old one, replayed).
    func heard(_ nonce: UInt64) -> Bool {
        state.withLock { state in
            guard state.expected == nonce else { return false }
            state.heard = true
            return true
        }
    }

    func wasHeard(_ nonce: UInt64) -> Bool {
        state.withLock { $0.expected == nonce && $0.heard }
    }

    /// Logs the first rejected payload and every 1,000th after it: the metric counts them all, and a flood of
    /// forged NOTIFYs does not flood the log.
    func shouldLogRejection() -> Bool {
        state.withLock { state in
            defer { state.rejectionsSeen += 1 }
            return state.rejectionsSeen % 1000 == 0
        }
    }
}

struct HeartbeatMissed: Error, CustomStringConvertible {
    package var description: String { "the listening session did not hear its heartbeat back in time" }
}
