import BrokerCore
import BrokerProtocol
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// The cluster bus on PostgreSQL LISTEN/NOTIFY: sends this node's events and applies the other nodes'.
///
/// Every payload is sealed with the cluster secrets (``ClusterKeys``): anyone else who can connect to the database
/// may LISTEN, but hears nothing readable, and may NOTIFY, but nothing that does not open is applied (it is
/// counted in `broker_cluster_sealed_rejected_total`). A donation change travels as its id and revision; the
/// node reads the row, so the table stays the one truth and a donation of any size crosses.
///
/// Donation changes and heartbeats travel on the control channel (``PostgresDonationStore/eventChannel``), which
/// every node listens to. A volunteer's positions and presence travel on the channel of the volunteer's bus shard
/// (``ClusterShards``, picked by a keyed hash), and a node listens only to the shards in which it has subscribers
/// (``ShardListener``), so it opens only the positions its donors may receive; docs/SCALING.md gives the figures.
/// The NOTIFY channel a payload was sent on is bound into its seal, so nothing moves from one channel to another.
///
/// Two tasks, each on a connection of its own: a writer that drains the ``ClusterOutbox`` in batches (one statement
/// and round trip per batch, order kept), and a listener that reconnects with backoff, checks its session with a sealed
/// heartbeat it must hear back within ``heartbeatPeriod``, and after every (re)connection and every gap in the
/// revisions it was brought, reads every donation change after the last revision up to which it has seen all;
/// on the same session a ``ShardListener`` joins and leaves the shards.
struct PostgresBus: Service {
    let location: PostgresLocation
    let client: PostgresClient
    let store: PostgresDonationStore
    let keys: ClusterKeys
    let outbox: ClusterOutbox
    let hub: Hub
    let metrics: ClusterMetrics
    let logger: Logger
    /// Opened once the node first listens (and has caught up): the server waits for it.
    let listening: Latch
    /// How often the listening session's round trip runs, and how long it may take.
    var heartbeatPeriod: Duration = .seconds(5)
    /// Events sent per round trip at most.
    var batchSize = 256
    /// What the writer sent on shard channels, dropped unopened when it comes back.
    let echoes = OwnEchoes()

    private var channel: String { PostgresDonationStore.eventChannel }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await withChildTasks { add, _ in
                add { await writeLoop() }
                add { await listenLoop() }
            }
        }
    }

    // MARK: Sending

    /// Sends the outbox's events in batches, in order, on a connection of its own: a batch is one statement, and
    /// a pool's lease of a connection (its timers, its tasks) cost a node more per batch than the statement did.
    /// A batch that cannot be sent, or is not answered within two ``heartbeatPeriod``s, is put back and the
    /// connection made again, with backoff.
    private func writeLoop() async {
        var backoff = Backoff()
        var routes = ChannelRoutes(keys: keys)
        var session: BusWriterSession?
        var connectionID = 1
        while !Task.isCancelled {
            let batch = await outbox.take(upTo: batchSize)
            guard !batch.isEmpty else { continue }
            var payloads: [String] = []
            var targets: [String] = []
            var positions: [LastPositionRows.Position] = []
            payloads.reserveCapacity(batch.count)
            targets.reserveCapacity(batch.count)
            positions.reserveCapacity(batch.count)
            for event in batch {
                // Encoded once: sealed for each of its channels and, for a position, for its stored row.
                guard let plaintext = try? event.plaintext() else {
                    metrics.clusterEventsDropped.increment()
                    continue
                }
                // A volunteer's positions and presence go on its bus shards (each secret's during a rotation);
                // donation changes and heartbeats on the control channel.
                let channels: [String]
                switch event {
                case .position(_, let volunteer, _, _, _, _, _), .offline(_, let volunteer, _): channels = routes.route(of: volunteer).busChannels
                case .donation, .heartbeat: channels = [channel]
                }
                for target in channels {
                    guard let payload = try? event.sealed(plaintext, with: keys, channel: target), payload.utf8.count <= ClusterEvent.maximumPayloadBytes
                    else {
                        metrics.clusterEventsDropped.increment()
                        continue
                    }
                    echoes.sent(payload, on: target)
                    payloads.append(payload)
                    targets.append(target)
                }
                if case .position(_, let volunteer, let seq, _, let donations, _, _) = event {
                    positions.append(.init(channel: volunteer, seq: seq, donations: donations, plaintext: plaintext))
                }
            }
            let last = LastPositionRows(positions, routes: &routes)
            do {
                if session == nil {
                    session = BusWriterSession(
                        connection: try await PostgresConnection.connect(
                            configuration: try location.connectionConfiguration(), id: connectionID, logger: logger))
                    connectionID += 1
                }
                try await send(payloads, on: targets, keeping: last, over: session!)
                metrics.clusterEventsOut.increment(by: Int64(payloads.count))
                backoff.reset()
            } catch {
                await session?.close()
                session = nil
                outbox.putBack(batch)
                logger.warning("cannot send cluster events; retrying", metadata: ["error": "\(String(reflecting: error))", "queued": "\(batch.count)"])
                try? await Task.sleep(for: backoff.next())
            }
            let dropped = outbox.takeDroppedCount()
            if dropped > 0 { metrics.clusterEventsDropped.increment(by: Int64(dropped)) }
        }
        await session?.close()
    }

    /// One statement, and so one transaction and one round trip, per batch (`lb_keep_positions`, migration
    /// v5-keep-positions): the channels' newest positions, sealed, for nodes that start later, then the events, in
    /// order (NOTIFYs of one transaction are delivered in the order sent).
    ///
    /// A position is stored only while one of its donations is still trackable for its volunteer, checked under
    /// the donation change lock held shared: a change that ends tracking (and deletes the row) commits either
    /// before the check, which then fails, or after the upsert, and deletes what it wrote. The function takes the
    /// lock before the upsert's statement starts, so the check's snapshot is taken after the lock is granted. The
    /// check reads the named donations by key and parses only their bodies: as an `EXISTS` PostgreSQL made it a
    /// join that parsed every donation's body for every batch.
    private func send(_ payloads: [String], on targets: [String], keeping last: LastPositionRows, over session: BusWriterSession) async throws {
        try await session.run(
            """
            SELECT lb_keep_positions(\(PostgresDonationStore.changeLockKey), \(last.channelKeys)::text[], \(last.seqs)::int8[],
                \(last.sealed)::text[], \(last.donations)::text[], \(last.channels)::text[], \(targets)::text[], \(payloads)::text[])
            """,
            deadline: heartbeatPeriod * 2, logger: logger)
    }

    // MARK: Receiving

    private func listenLoop() async {
        var backoff = Backoff()
        var connectionID = 1
        let heartbeats = HeartbeatLedger()
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: try location.connectionConfiguration(), id: connectionID, logger: logger)
                connectionID += 1
                do {
                    try await connection.listen(on: channel) { notifications in
                        // Listening first, then catching up: a change committed meanwhile comes twice, and the
                        // revisions make the second one a no-op.
                        try await catchUp()
                        metrics.clusterConnected.set(Int64(1))
                        listening.open()
                        backoff.reset()
                        logger.info("listening to the cluster")
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            // Ends the session (so the loop below ends) when a heartbeat is not heard back.
                            group.addTask { try await checkSession(connection, heartbeats) }
                            if let interest = outbox.interest {
                                let shards = ShardListener(
                                    connection: connection, interest: interest, hub: hub, metrics: metrics, client: client, logger: logger,
                                    sweepPeriod: heartbeatPeriod, receive: { payload, shard in try await receive(payload, on: shard, heartbeats) })
                                group.addTask { await shards.run() }
                            }
                            for try await notification in notifications {
                                try await receive(notification.payload, on: channel, heartbeats)
                            }
                            group.cancelAll()
                            try await group.waitForAll()
                        }
                    }
                } catch {
                    metrics.clusterConnected.set(Int64(0))
                    try? await connection.close()
                    throw error
                }
                metrics.clusterConnected.set(Int64(0))
                try? await connection.close()
            } catch {
                metrics.clusterConnected.set(Int64(0))
                if Task.isCancelled { return }
                logger.warning("lost the cluster bus; reconnecting", metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await Task.sleep(for: backoff.next())
        }
    }

    /// Sends a sealed heartbeat through the pool (and sweeps stored last positions past their retention), and
    /// checks one ``heartbeatPeriod`` later that it came back through the listening session; then the next. A
    /// heartbeat not heard back in time, or one that cannot be sent, means the bus cannot be trusted:
    /// `broker_cluster_connected` goes to 0 and the session is closed, so the listener reconnects and catches up.
    private func checkSession(_ connection: PostgresConnection, _ heartbeats: HeartbeatLedger) async throws {
        while !Task.isCancelled {
            let nonce = UInt64.random(in: 1...UInt64.max)
            heartbeats.expect(nonce)
            let sent = await withTaskGroup(of: Bool.self) { group -> Bool in
                group.addTask { await sendHeartbeat(nonce) }
                try? await Task.sleep(for: heartbeatPeriod)
                group.cancelAll()
                var sent = false
                for await result in group { sent = result }
                return sent
            }
            if Task.isCancelled { return }
            guard sent, heartbeats.wasHeard(nonce) else {
                metrics.clusterHeartbeatsMissed.increment()
                metrics.clusterConnected.set(Int64(0))
                logger.warning("the cluster listener did not hear its heartbeat back; reconnecting", metadata: ["sent": "\(sent)"])
                try? await connection.close()
                throw HeartbeatMissed()
            }
        }
    }

    /// Sends a heartbeat through the pool and sweeps stored last positions older than their retention.
    private func sendHeartbeat(_ nonce: UInt64) async -> Bool {
        do {
            let payload = try ClusterEvent.heartbeat(origin: outbox.node, nonce: nonce).sealed(with: keys, channel: channel)
            try await client.query("SELECT pg_notify(\(channel), \(payload))", logger: logger)
        } catch {
            return false
        }
        do {
            try await client.query(
                "DELETE FROM lb_last_positions WHERE kept_at < now() - make_interval(secs => \(Double(SealedLastPosition.retentionSeconds)))",
                logger: logger)
        } catch {
            logger.warning("cannot sweep old stored positions", metadata: ["error": "\(String(reflecting: error))"])
        }
        return true
    }

    /// Applies every donation change after the last revision up to which this node has seen all of them: a
    /// change committed elsewhere while this node's listener was away is never skipped, even when this node made
    /// a newer change of its own meanwhile.
    private func catchUp() async throws {
        let from = hub.completeRevision
        let changes = try await store.changes(since: from)
        var applied = 0
        for change in changes where hub.apply(change) { applied += 1 }
        // Revisions are committed in order: every revision below the newest row read is in what was read, was
        // superseded by a newer change of its donation, or never committed.
        hub.noteAccounted(through: changes.map(\.revision).max() ?? from)
        metrics.clusterCatchUps.increment()
        if applied > 0 { logger.info("caught up on donation changes", metadata: ["applied": "\(applied)", "after": "\(from)"]) }
    }

    /// Opens and applies one payload heard on the NOTIFY channel `source`.
    private func receive(_ payload: String, on source: String, _ heartbeats: HeartbeatLedger) async throws {
        // This node's own positions and presence come back on the shards it listens to; they are never applied here.
        if echoes.isOwn(payload, on: source) { return }
        let event: ClusterEvent
        do {
            event = try ClusterEvent(sealed: payload, keys: keys, channel: source)
        } catch is ClusterSealError {
            metrics.clusterSealedRejected["bus"]?.increment()
            if heartbeats.shouldLogRejection() {
                logger.warning("a cluster event that does not open with the cluster secrets was dropped (forged, or sealed with another secret)")
            }
            return
        } catch {
            metrics.clusterEventsDropped.increment()
            logger.warning("unreadable cluster event", metadata: ["error": "\(error)"])
            return
        }
        switch event {
        case .donation(_, let id, let revision):
            // Our own changes come back too; they were applied before the API replied, so this is a no-op.
            metrics.clusterEventsIn["donation"]?.increment()
            let change = try await store.current(id: id)
            if let change { hub.apply(change) }
            if hub.noteSeen(revision, change?.revision ?? revision) {
                // A revision below this one never came: missed, or never committed. The store knows which.
                try await catchUp()
            }
        case .position(let origin, let channel, let seq, let position, let donations, let viewSeqs, let seenAt):
            guard origin != outbox.node else { return }
            metrics.clusterEventsIn["position"]?.increment()
            hub.receiveRemotePosition(channel: channel, seq: seq, position: position, donations: donations, viewSeqs: viewSeqs, seenAt: seenAt)
        case .offline(let origin, let channel, let lastSeen):
            guard origin != outbox.node else { return }
            metrics.clusterEventsIn["offline"]?.increment()
            hub.receiveRemoteOffline(channel: channel, lastSeen: lastSeen)
        case .heartbeat(let origin, let nonce):
            guard origin == outbox.node, heartbeats.heard(nonce) else { return }
            metrics.clusterConnected.set(Int64(1))
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

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await client.run()
        }
    }
}
