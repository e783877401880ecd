import BrokerCore
import BrokerProtocol
import DequeModule

/// The events this node has to tell the others, queued without waiting: the publish path appends under its
/// channel lock and returns, and the bus's writer task sends them in batches.
///
/// Bounded: while PostgreSQL is unreachable the oldest events are dropped (and counted) past ``capacity``,
/// so a long outage costs bounded memory. Donation changes never pass through here: the store sends them
/// inside the change's own transaction.
final class ClusterOutbox: ClusterLink {
    private struct State {
        var events = Deque<ClusterEvent>()
        var waiter: CheckedContinuation<Void, Never>?
        var dropped = 0
    }

    private let state = LockedValue(State())
    /// Events held at most.
    let capacity: Int
    /// This node's name, stamped on every event.
    let node: String
    /// The bus shards this node listens to; `nil` where no bus runs (tests of the outbox alone).
    let interest: ShardInterest?

    init(node: String, interest: ShardInterest? = nil, capacity: Int = 100_000) {
        self.node = node
        self.interest = interest
        self.capacity = capacity
    }

    /// Queues a position this node kept on `channel` under `seq`, for the donations in `donations`, numbered
    /// `viewSeqs` in their views.
    package func announcePosition(channel: String, seq: Int64, position: Position, donations: [String], viewSeqs: [Int64], seenAt: Int64) {
        announce(.position(origin: node, channel: channel, seq: seq, position: position, donations: donations, viewSeqs: viewSeqs, seenAt: seenAt))
    }

    /// Queues that the volunteer's last connection to this node closed.
    package func announceOffline(channel: String, lastSeen: Int64?) {
        announce(.offline(origin: node, channel: channel, lastSeen: lastSeen))
    }

    /// Keeps a subscription until this node listens to the volunteer's bus shards (``ShardInterest``); answered
    /// at once where no bus runs.
    package func admitSubscription(_ waiting: WaitingSubscription) -> Bool {
        guard let interest else { return true }
        return interest.admit(.init(waiting: waiting, shards: interest.shards(of: waiting.channel)))
    }

    package func withdrawSubscription(connection: UInt64, channel: String?, donation: String?) -> WaitingSubscription? {
        interest?.withdraw(connection: connection, channel: channel, donation: donation)?.waiting
    }

    /// Queues `event` and wakes the writer. Never blocks beyond the queue's lock.
    private func announce(_ event: ClusterEvent) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.events.count >= capacity {
                state.events.removeFirst()
                state.dropped += 1
            }
            state.events.append(event)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Waits until events are queued, then takes up to `limit` of them, oldest first.
    func take(upTo limit: Int) async -> [ClusterEvent] {
        while true {
            let batch = state.withLock { state -> [ClusterEvent] in
                let count = min(limit, state.events.count)
                let batch = Array(state.events.prefix(count))
                state.events.removeFirst(count)
                return batch
            }
            if !batch.isEmpty { return batch }
            if Task.isCancelled { return [] }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let ready = state.withLock { state -> Bool in
                        if !state.events.isEmpty || Task.isCancelled { return true }
                        state.waiter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume()
            }
        }
    }

    /// Puts back events that could not be sent, ahead of newer ones, so the order is kept for the retry.
    func putBack(_ events: [ClusterEvent]) {
        state.withLock { state in
            state.events.insert(contentsOf: events, at: 0)
            while state.events.count > capacity {
                state.events.removeFirst()
                state.dropped += 1
            }
        }
    }

    /// Events dropped because the queue was full, since the last call.
    func takeDroppedCount() -> Int {
        state.withLock { state in
            defer { state.dropped = 0 }
            return state.dropped
        }
    }
}
