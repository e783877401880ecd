import BrokerCore

/// The current JWKS snapshot, shared by the token verifier (which reads it on every handshake) and the
/// ``JWKSRefresher`` (which swaps in a new one). Reading takes a lock for the time of a copy, never an await.
package final class KeyRing: Sendable {
    private struct State {
        var keys: VerificationKeys
        /// A token named a `kid` the set does not hold since the refresher last looked.
        var unknownKeySeen = false
    }

    private let state: LockedValue<State>
    /// Wakes the refresher; holds at most one pending wake-up, so a flood of unknown `kid`s costs nothing.
    private let doorbell: AsyncStream<Void>.Continuation
    /// The refresher's end of the doorbell.
    let wakeUps: AsyncStream<Void>

    init(_ keys: VerificationKeys) {
        state = LockedValue(State(keys: keys))
        (wakeUps, doorbell) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// The keys in force.
    var keys: VerificationKeys { state.withLock { $0.keys } }

    /// Puts a newly read key set in force.
    func replace(with keys: VerificationKeys) {
        state.withLock { $0.keys = keys }
    }

    /// Tells the refresher that a token named a key the set does not hold: the issuer may have rotated its keys.
    /// The refresher decides whether to fetch now (at most once per ``JWKSTiming/unknownKeyInterval``).
    func reportUnknownKey() {
        state.withLock { $0.unknownKeySeen = true }
        doorbell.yield()
    }

    /// Whether an unknown key was reported since the last call; clears the report.
    func takeUnknownKeyReport() -> Bool {
        state.withLock { state in
            defer { state.unknownKeySeen = false }
            return state.unknownKeySeen
        }
    }

    /// Wakes the refresher (its timer, SIGHUP).
    func wake() {
        doorbell.yield()
    }
}
