import BrokerProtocol
import NIOConcurrencyHelpers

extension VolunteerPublisher {
    /// What ``VolunteerPublisher/publish(_:)`` gives back: the fix, and what became of it, to await when the app
    /// wants to know (`let outcome = await publisher.publish(fix).outcome`), or to ignore.
    ///
    /// The outcome is the fix's ``FixOutcome``, the same one the `.fix` event carries, and it comes exactly once:
    /// - when the broker answers (`ack`: accepted; `error`: refused with its code), usually within a round trip;
    /// - at once when the fix is not newer than one handed over before, or the publisher has stopped;
    /// - when a newer fix is handed over before the answer (superseded), or, while disconnected, when a connection
    ///   comes (sent then, or dropped as too old) or the publisher stops (dropped).
    ///
    /// So a fix handed over while offline is settled when the network comes back, when the app hands over a newer
    /// one, or when the task running ``VolunteerPublisher/run()`` ends, whichever is first. Awaiting ``outcome``
    /// never holds a task beyond its cancellation: a cancelled wait gives `nil`, and the fix goes on as before.
    public struct FixReceipt: Sendable {
        /// The fix, as handed over.
        public let position: Position
        let slot: FixSettlement

        /// What became of the fix: waits until it is settled. `nil` only when the waiting task is cancelled first.
        public var outcome: FixOutcome? {
            get async { await slot.wait() }
        }

        /// The outcome if the fix is settled already, without waiting.
        public var settled: FixOutcome? { slot.current }
    }
}

/// The one outcome of one fix, and the tasks waiting for it.
final class FixSettlement: Sendable {
    typealias FixOutcome = VolunteerPublisher.FixOutcome

    private struct State {
        var outcome: FixOutcome?
        var waiters: [UInt64: CheckedContinuation<FixOutcome?, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())

    init() {}

    var current: FixOutcome? { state.withLockedValue { $0.outcome } }

    /// Settles the fix and wakes every task waiting; later calls change nothing.
    func settle(_ outcome: FixOutcome) {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<FixOutcome?, Never>] in
            guard state.outcome == nil else { return [] }
            state.outcome = outcome
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }

    /// The outcome, once settled; `nil` when the waiting task is cancelled first.
    func wait() async -> FixOutcome? {
        let id = state.withLockedValue { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<FixOutcome?, Never>) in
                let ready = state.withLockedValue { state -> FixOutcome?? in
                    if let outcome = state.outcome { return .some(outcome) }
                    // Cancelled before the wait was in place: the cancellation handler found nothing to end.
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            state.withLockedValue { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }
}
