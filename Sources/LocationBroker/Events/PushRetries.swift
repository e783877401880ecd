import BrokerCore
import BrokerStorage

/// The pushes waiting to be tried again, one slot per browser subscription of a donation.
///
/// Each subscription is tried on its own: a push that one browser's service did not take waits here, for that
/// browser only, while the donation's later pushes go to every browser at once. A slot holds one push: a newer push
/// for the same browser replaces the one waiting (it carries the same tag and would replace it on the screen), so a
/// browser is never sent an older push after a newer one.
///
/// Kept in the memory of the node that made the first attempt: a push is worth minutes, and a node that stops takes
/// its retries with it rather than sending stale words later.
final class PushRetries: Sendable {
    /// One browser's subscription to one donation.
    struct Key: Hashable, Sendable {
        let endpoint: String
        let donation: String
    }

    /// A push waiting for its next attempt.
    struct Pending: Sendable {
        let event: OutboxEvent
        let message: PushMessage
        let subscription: PushSubscriptionRecord
        /// When it is given up (ms since the epoch).
        let giveUpAt: Int64
    }

    private struct State {
        var pending: [Key: Pending] = [:]
        /// The keys a retry loop runs for.
        var looping: Set<Key> = []
    }

    private let state = LockedValue(State())

    /// `event` reached the browser (or the browser is gone): a retry of an older push waiting for it is dropped.
    func settled(_ key: Key, by event: OutboxEvent) {
        state.withLock { state in
            if let waiting = state.pending[key], waiting.event.id != event.id { state.pending[key] = nil }
        }
    }

    /// Keeps `pending` for its browser, replacing an older push waiting there.
    /// - Returns: whether a retry loop must be started for the key (none runs).
    func wait(_ key: Key, _ pending: Pending) -> Bool {
        state.withLock { state in
            state.pending[key] = pending
            return state.looping.insert(key).inserted
        }
    }

    /// The push waiting for `key`, if any; when none waits, the key's loop ends (atomically with the look-up, so a
    /// push kept meanwhile starts a new loop).
    func next(_ key: Key) -> Pending? {
        state.withLock { state in
            guard let pending = state.pending[key] else {
                state.looping.remove(key)
                return nil
            }
            return pending
        }
    }

    /// The attempt at `event` ended for good (delivered, gone, refused or given up): forgets it unless a newer push
    /// took its place.
    func done(_ key: Key, event: String) {
        state.withLock { state in
            if state.pending[key]?.event.id == event { state.pending[key] = nil }
        }
    }

    /// Pushes waiting, for metrics and tests.
    var count: Int { state.withLock { $0.pending.count } }
}
