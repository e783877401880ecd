import BrokerCore
import DequeModule

/// The payloads this node's writer sent on the shard channels lately, so that its listener drops them unopened
/// when PostgreSQL brings them back: a node listening to a shard hears its own positions too, and opening and
/// decoding each only to find its own name in it cost as much as sealing it.
///
/// Only an exact payload on the exact channel it was sent on is dropped, which is what the listener would do once
/// it had opened it (an event from this node is never applied here). A payload moved to another channel, altered,
/// or heard after it was forgotten is opened as any other. Bounded: the oldest are forgotten past ``capacity``
/// (those sent on shards this node does not listen to never come back).
final class OwnEchoes: Sendable {
    private struct State {
        var channels: [String: String] = [:]
        var order = Deque<String>()
    }

    private let state = LockedValue(State())
    /// Payloads remembered at most.
    let capacity: Int

    init(capacity: Int = 8_192) {
        self.capacity = capacity
    }

    /// Remembers that this node sends `payload` on `channel`; called before it is sent.
    func sent(_ payload: String, on channel: String) {
        state.withLock { state in
            if state.order.count >= capacity, let oldest = state.order.popFirst() {
                state.channels.removeValue(forKey: oldest)
            }
            state.channels[payload] = channel
            state.order.append(payload)
        }
    }

    /// Whether `payload`, heard on `channel`, is one this node sent there (then forgotten: it comes back once).
    func isOwn(_ payload: String, on channel: String) -> Bool {
        state.withLock { state in
            guard state.channels[payload] == channel else { return false }
            state.channels.removeValue(forKey: payload)
            return true
        }
    }
}
