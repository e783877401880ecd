import BrokerProtocol
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// The cluster bus on PostgreSQL LISTEN/NOTIFY: sends this node's events and applies the other nodes'.
///
/// Every node listens on one channel (``PostgresDonationStore/eventChannel``) and receives every event. That
/// keeps the bus simple and `since`, last-known position and presence available on every node (each keeps
/// every active channel's history), at the cost of each node decoding every position; docs/SCALING.md gives
/// the measured ceiling and what to do past it.
///
/// Two tasks: a writer that drains the ``ClusterOutbox`` in batches (one round trip per batch, order kept),
/// and a listener on a connection of its own that reconnects with backoff and, after every (re)connection,
/// catches up on donation changes it may have missed from the store's revisions.
struct PostgresBus: Service {
    let location: PostgresLocation
    let client: PostgresClient
    let store: PostgresDonationStore
    let outbox: ClusterOutbox
    let hub: Hub
    let logger: Logger
    /// Opened once the node first listens (and has caught up): the server waits for it.
    let listening: Latch
    /// Events sent per round trip at most.
    var batchSize = 256

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await writeLoop() }
                group.addTask { await listenLoop() }
            }
        }
    }

    // MARK: Sending

    private func writeLoop() async {
        var backoff = Backoff()
        while !Task.isCancelled {
            let batch = await outbox.take(upTo: batchSize)
            guard !batch.isEmpty else { continue }
            var payloads: [String] = []
            payloads.reserveCapacity(batch.count)
            for event in batch {
                guard let payload = try? event.encoded(), payload.utf8.count <= ClusterEvent.maximumPayloadBytes else {
                    hub.metrics.clusterEventsDropped.increment()
                    continue
                }
                payloads.append(payload)
            }
            let last = LastPositionRows(batch)
            do {
                // One statement per batch: the channels' newest positions for nodes that start later (only while
                // one of their donations is still trackable), then the events, in order (NOTIFYs of one
                // transaction are delivered in the order sent).
                try await client.query(
                    """
                    WITH kept AS (
                        INSERT INTO lb_last_positions (channel, seq, position, donations, seen_at)
                        SELECT * FROM unnest(\(last.channels)::text[], \(last.seqs)::int8[], \(last.positions)::text[], \(last.donations)::text[], \(last.seenAts)::int8[]) AS p(channel, seq, position, donations, seen_at)
                        WHERE EXISTS (
                            SELECT 1 FROM lb_donations d
                            WHERE d.id = ANY(string_to_array(p.donations, ','))
                            AND d.body::jsonb->>'state' IN ('BEING-LOOKED-FOR', 'BEING-TAKEN-TO'))
                        ON CONFLICT (channel) DO UPDATE SET seq = EXCLUDED.seq, position = EXCLUDED.position,
                            donations = EXCLUDED.donations, seen_at = EXCLUDED.seen_at
                        WHERE lb_last_positions.seq < EXCLUDED.seq
                    )
                    SELECT pg_notify(\(PostgresDonationStore.eventChannel), payload) FROM unnest(\(payloads)::text[]) WITH ORDINALITY AS t(payload, n) ORDER BY n
                    """,
                    logger: logger)
                hub.metrics.clusterEventsOut.increment(by: Int64(payloads.count))
                backoff.reset()
            } catch {
                outbox.putBack(batch)
                logger.warning("cannot send cluster events; retrying", metadata: ["error": "\(String(reflecting: error))", "queued": "\(batch.count)"])
                try? await Task.sleep(for: backoff.next())
            }
            let dropped = outbox.takeDroppedCount()
            if dropped > 0 { hub.metrics.clusterEventsDropped.increment(by: Int64(dropped)) }
        }
    }

    // MARK: Receiving

    private func listenLoop() async {
        var backoff = Backoff()
        var connectionID = 1
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: try location.connectionConfiguration(), id: connectionID, logger: logger)
                connectionID += 1
                do {
                    try await connection.listen(on: PostgresDonationStore.eventChannel) { notifications in
                        // Listening first, then catching up: a change committed meanwhile comes twice, and the
                        // revisions make the second one a no-op.
                        try await catchUp()
                        hub.metrics.clusterConnected.set(Int64(1))
                        listening.open()
                        backoff.reset()
                        logger.info("listening to the cluster")
                        for try await notification in notifications {
                            receive(notification.payload)
                        }
                    }
                } catch {
                    hub.metrics.clusterConnected.set(Int64(0))
                    try? await connection.close()
                    throw error
                }
                hub.metrics.clusterConnected.set(Int64(0))
                try? await connection.close()
            } catch {
                hub.metrics.clusterConnected.set(Int64(0))
                if Task.isCancelled { return }
                logger.warning("lost the cluster bus; reconnecting", metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await Task.sleep(for: backoff.next())
        }
    }

    /// Applies every donation change after the newest this node applied.
    private func catchUp() async throws {
        let changes = try await store.changes(since: hub.highestAppliedRevision)
        var applied = 0
        for change in changes where hub.apply(change) { applied += 1 }
        if applied > 0 { logger.info("caught up on donation changes", metadata: ["applied": "\(applied)"]) }
    }

    private func receive(_ payload: String) {
        let event: ClusterEvent
        do {
            event = try ClusterEvent(payload: payload)
        } catch {
            hub.metrics.clusterEventsDropped.increment()
            logger.warning("unreadable cluster event", metadata: ["error": "\(error)"])
            return
        }
        switch event {
        case .donation(_, let change):
            // Our own changes come back too; they were applied before the API replied, so this is a no-op.
            hub.metrics.clusterEventsIn["donation"]?.increment()
            hub.apply(change)
        case .position(let origin, let channel, let seq, let position, let donations, let seenAt):
            guard origin != outbox.node else { return }
            hub.metrics.clusterEventsIn["position"]?.increment()
            hub.receiveRemotePosition(channel: channel, seq: seq, position: position, donations: donations, seenAt: seenAt)
        case .offline(let origin, let channel, let lastSeen):
            guard origin != outbox.node else { return }
            hub.metrics.clusterEventsIn["offline"]?.increment()
            hub.receiveRemoteOffline(channel: channel, lastSeen: lastSeen)
        }
    }
}

/// Exponential backoff from 100 ms to 5 s.
struct Backoff {
    private var current: Duration = .milliseconds(100)

    mutating func next() -> Duration {
        defer { current = min(current * 2, .seconds(5)) }
        return current
    }

    mutating func reset() {
        current = .milliseconds(100)
    }
}

/// Runs the PostgreSQL pool for as long as the broker runs.
struct PostgresClientService: Service {
    let client: PostgresClient

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await client.run()
        }
    }
}

/// The newest position of each channel in a batch of events, as columns for one `unnest` insert (a channel may
/// appear once per statement in an upsert).
private struct LastPositionRows {
    var channels: [String] = []
    var seqs: [Int64] = []
    var positions: [String] = []
    var donations: [String] = []
    var seenAts: [Int64] = []

    init(_ batch: [ClusterEvent]) {
        var newest: [String: Int] = [:]
        var rows: [(channel: String, seq: Int64, position: Position, donations: [String], seenAt: Int64)] = []
        for case .position(_, let channel, let seq, let position, let donations, let seenAt) in batch {
            if let index = newest[channel] {
                rows[index] = (channel, seq, position, donations, seenAt)
            } else {
                newest[channel] = rows.count
                rows.append((channel, seq, position, donations, seenAt))
            }
        }
        let encoder = JSONEncoder()
        for row in rows {
            guard let position = try? encoder.encode(row.position) else { continue }
            channels.append(row.channel)
            seqs.append(row.seq)
            positions.append(String(decoding: position, as: UTF8.self))
            donations.append(row.donations.joined(separator: ","))
            seenAts.append(row.seenAt)
        }
    }
}
