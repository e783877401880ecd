import BrokerCore
import Foundation
import Logging
import PostgresNIO

/// The shard half of one listening session: a LISTEN on each bus shard this node wants (``ShardInterest``), on
/// the session's connection, joined as donors subscribe and left (UNLISTEN) once no subscriber of the shard is
/// left here, checked every ``sweepPeriod``.
///
/// Joining a shard: LISTEN, confirmed by PostgreSQL; then the shard's stored last positions are read from
/// `lb_last_positions` and taken in; then the subscriptions waiting for the shard are answered. A position
/// committed before the LISTEN is in the store, one committed after comes on the bus (one committed meanwhile
/// comes both ways, and its seq makes the second a no-op).
///
/// A shard that cannot be joined, or whose listening fails, closes the session: the bus reconnects, catches up
/// and joins every wanted shard again.
struct ShardListener: Sendable {
    let connection: PostgresConnection
    let interest: ShardInterest
    let hub: Hub
    let metrics: ClusterMetrics
    let client: PostgresClient
    let logger: Logger
    /// How often shards without subscribers here are left.
    let sweepPeriod: Duration
    /// Handles one payload received on a shard's NOTIFY channel (payload, channel).
    let receive: @Sendable (String, String) async throws -> Void

    func run() async {
        var listening: [Int: Task<Void, Never>] = [:]
        await withChildTasks { add, cancelAll in
            add {
                while !Task.isCancelled {
                    try? await Task.sleep(for: sweepPeriod)
                    interest.poke()
                }
            }
            var lastSweep = ContinuousClock.now
            while !Task.isCancelled {
                if ContinuousClock.now - lastSweep >= sweepPeriod {
                    sweep()
                    lastSweep = .now
                }
                let wanted = interest.wanted()
                for (shard, task) in listening where !wanted.contains(shard) {
                    task.cancel()
                    listening[shard] = nil
                }
                for shard in wanted where listening[shard] == nil {
                    listening[shard] = Task { await listen(shard) }
                }
                metrics.clusterShardsListened.set(Int64(listening.count))
                await interest.nextChange()
            }
            cancelAll()
        }
        for task in listening.values { task.cancel() }
        for task in listening.values { await task.value }
        metrics.clusterShardsListened.set(Int64(0))
    }

    /// Leaves the shards in which this node has no subscriber and admitted none since it counted.
    private func sweep() {
        let before = interest.admissionCounts()
        let used = Set(hub.subscribedChannelNames().flatMap { interest.shards(of: $0) })
        let left = interest.leave(keeping: used, unchangedSince: before)
        if !left.isEmpty { logger.debug("left bus shards without subscribers here", metadata: ["shards": "\(left)"]) }
    }

    private func listen(_ shard: Int) async {
        let name = ClusterShards.channel(shard)
        do {
            try await connection.listen(on: name) { notifications in
                // LISTEN is confirmed: what was kept before it is in the store, what is kept after comes here.
                try await takeInStored(shard)
                guard !Task.isCancelled else { return }
                hub.completePending(interest.joined(shard).map(\.waiting))
                for try await notification in notifications {
                    try await receive(notification.payload, name)
                }
            }
        } catch {
            if Task.isCancelled { return }
            logger.warning("cannot listen to a bus shard; reconnecting", metadata: ["shard": "\(shard)", "error": "\(String(reflecting: error))"])
            try? await connection.close()
        }
    }

    /// Reads and takes in the stored last positions of the channels of `shard` that this node holds.
    private func takeInStored(_ shard: Int) async throws {
        let keys = interest.keys
        let channels = hub.channels.names(.gated).filter { interest.shards(of: $0).contains(shard) }
        guard !channels.isEmpty else { return }
        let channelKeys = channels.flatMap { keys.channelKeys($0) }
        let oldest = Int64((Date().timeIntervalSince1970 - Double(SealedLastPosition.retentionSeconds)) * 1000)
        var stored: [LastPosition] = []
        let rows = try await client.query(
            "SELECT channel_key, sealed FROM lb_last_positions WHERE channel_key = ANY(\(channelKeys)::text[])", logger: logger)
        for try await (channelKey, sealed) in rows.decode((String, String).self) {
            guard let last = try? SealedLastPosition.open(channelKey: channelKey, sealed: sealed, keys: keys) else {
                metrics.clusterSealedRejected["store"]?.increment()
                continue
            }
            if last.seenAt >= oldest { stored.append(last) }
        }
        // During a rotation a channel may have a row under each secret's key: the newest counts.
        hub.takeInStored(stored.sorted { $0.seq > $1.seq })
    }
}
