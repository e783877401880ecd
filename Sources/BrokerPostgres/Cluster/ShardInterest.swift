import BrokerCore
import BrokerProtocol

/// The bus's shards: positions and presence of a volunteer travel on the NOTIFY channel of the volunteer's shard,
/// donation changes and heartbeats on the control channel (``PostgresDonationStore/eventChannel``).
enum ClusterShards {
    /// Fixed: every node of a cluster must agree on it, so changing it needs a full restart (docs/SCALING.md).
    static let count = 64

    /// The NOTIFY channel of shard `index`: `lb_events_s0` ... `lb_events_s63`.
    static func channel(_ index: Int) -> String { "\(PostgresDonationStore.eventChannel)_s\(index)" }
}

/// Which bus shards this node listens to, and the subscriptions that wait for one. A node listens only to the
/// shards in which it has subscribers (and always to the control channel).
///
/// A subscription to a volunteer whose shard this node does not listen to yet is not answered at once: it waits
/// until the listener has LISTENed on the shard (confirmed by PostgreSQL) and read the shard's stored last
/// positions. Its `subscribed` reply, `last` and `since` then come from what the cluster kept, and every
/// position published after that reply reaches the donor.
///
/// Leaving is lazy: ``leave(keeping:unchangedSince:)`` drops a shard only if no subscription was admitted to it
/// since the caller counted the subscribers, so a donor admitted meanwhile is never left on a shard not listened to.
final class ShardInterest: Sendable {
    /// A subscription that passed every check and waits for its shards.
    struct Pending: Sendable {
        /// The subscription, with the volunteer channel and the donation it was admitted for.
        let waiting: WaitingSubscription
        let shards: [Int]
    }

    private enum Phase { case joining, ready }

    private struct State {
        /// Shards listened to or being joined; absent means not listened to.
        var phases: [Int: Phase] = [:]
        /// Subscriptions admitted per shard, ever: a leave is abandoned when this moved.
        var admissions = [Int](repeating: 0, count: ClusterShards.count)
        var pending: [Pending] = []
        var waiter: CheckedContinuation<Void, Never>?
        var changed = false
    }

    private let state = LockedValue(State())
    let keys: ClusterKeys

    init(keys: ClusterKeys) {
        self.keys = keys
    }

    /// The shards of a volunteer channel (one, or one per secret during a rotation).
    func shards(of channel: String) -> [Int] { keys.shards(of: channel) }

    /// Called under the channel's lock by a subscription that passed every check.
    /// - Returns: `true` when every shard of the channel is listened to (subscribe now); `false` when the
    ///   subscription was kept, to be answered once its shards are joined (``joined(_:)``).
    func admit(_ pending: Pending) -> Bool {
        let (ready, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            for shard in pending.shards { state.admissions[shard] &+= 1 }
            if pending.shards.allSatisfy({ state.phases[$0] == .ready }) { return (true, nil) }
            state.pending.append(pending)
            var wanted = false
            for shard in pending.shards where state.phases[shard] == nil {
                state.phases[shard] = .joining
                wanted = true
            }
            guard wanted else { return (false, nil) }
            guard let waiter = state.waiter else {
                state.changed = true
                return (false, nil)
            }
            state.waiter = nil
            return (false, waiter)
        }
        waiter?.resume()
        return ready
    }

    /// Withdraws the waiting subscription of connection `id` to `channel` (any when `nil`) for `donation` (any when
    /// `nil`): the client unsubscribed before it was answered.
    /// - Returns: the withdrawn subscription, if one waited.
    func withdraw(connection id: UInt64, channel: String?, donation: String?) -> Pending? {
        state.withLock { state in
            guard
                let index = state.pending.firstIndex(where: {
                    $0.waiting.connection.id == id && (channel == nil || $0.waiting.channel == channel) && (donation == nil || $0.waiting.donation == donation)
                })
            else { return nil }
            return state.pending.remove(at: index)
        }
    }

    /// The shards to listen to: joined or being joined.
    func wanted() -> Set<Int> { state.withLock { Set($0.phases.keys) } }

    /// Notes that `shard` is listened to and its stored positions were read.
    /// - Returns: the waiting subscriptions whose every shard is now listened to, to be answered.
    func joined(_ shard: Int) -> [Pending] {
        state.withLock { state in
            guard state.phases[shard] != nil else { return [] }
            state.phases[shard] = .ready
            let (done, waiting) = state.pending.reduce(into: ([Pending](), [Pending]())) { split, pending in
                if pending.shards.allSatisfy({ state.phases[$0] == .ready }) { split.0.append(pending) } else { split.1.append(pending) }
            }
            state.pending = waiting
            return done
        }
    }

    /// How many subscriptions each shard admitted so far; taken before counting subscribers for a leave.
    func admissionCounts() -> [Int] { state.withLock { $0.admissions } }

    /// Stops wanting every ready shard outside `used` that admitted no subscription since `before` was taken and
    /// has none waiting.
    /// - Returns: the shards left.
    @discardableResult
    func leave(keeping used: Set<Int>, unchangedSince before: [Int]) -> [Int] {
        state.withLock { state in
            let waiting = Set(state.pending.flatMap(\.shards))
            let left = state.phases.keys.filter {
                state.phases[$0] == .ready && !used.contains($0) && !waiting.contains($0) && state.admissions[$0] == before[$0]
            }
            for shard in left { state.phases.removeValue(forKey: shard) }
            return left.sorted()
        }
    }

    /// Waits until a shard is wanted that was not, or until ``poke()``.
    func nextChange() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if state.changed || Task.isCancelled {
                        state.changed = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            poke()
        }
    }

    /// Wakes ``nextChange()`` (the periodic leave sweep, cancellation).
    func poke() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.changed = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}
