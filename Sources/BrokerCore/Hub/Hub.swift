import BrokerProtocol
import Logging

/// The broker's core, with no transport: channels, donation gates, subscriptions and the publish -> fan-out
/// path, writing to each connection's ``FrameSink``. The picture is in docs/ARCHITECTURE.md, the locks in
/// docs/LOCK-ORDER.md.
///
/// The hub composes parts with one job each, and gives each only the services it uses:
/// ``ChannelRegistry`` (the shards), ``ConnectionRegistry``, ``DonationGates``, ``Subscriptions``,
/// ``Publisher`` (rate limit, admission, fan-out through ``PositionKeeper`` and ``Delivery``), ``Presence``
/// and ``ClusterReceiver``. Its own methods are the entry points the transport, the API and the cluster call.
package final class Hub: Sendable {
    package let settings: HubSettings
    package let channels: ChannelRegistry
    let connections: ConnectionRegistry
    private let gates: DonationGates
    private let delivery: Delivery
    let subscriptions: Subscriptions
    private let publisher: Publisher
    private let presence: Presence
    private let receiver: ClusterReceiver
    private let metrics: any HubMetrics
    private let clock: WallClock
    private let cluster: (any ClusterLink)?

    /// - Parameters:
    ///   - metrics: where the core counts what it does.
    ///   - cluster: where positions and presence go for the other nodes; `nil` on a single node, which then
    ///     pays nothing for clustering.
    ///   - clock: the wall clock (a hand-moved one in tests).
    ///   - framing: how the transport frames a payload; called once per frame the hub makes.
    ///   - events: the rules trip events are decided by and where they go; `nil` decides none.
    package init(
        settings: HubSettings, metrics: any HubMetrics, cluster: (any ClusterLink)? = nil, clock: WallClock = .system,
        framing: Framing = .plain, events: TrackingEventRules? = nil
    ) {
        let channels = ChannelRegistry(settings: settings, clock: clock)
        let connections = ConnectionRegistry()
        let delivery = Delivery(framing: framing, metrics: metrics)
        let detector = events.map { TripEventDetector(rules: $0, arrivalRadiusMeters: settings.arrivalRadiusMeters) }
        let keeper = PositionKeeper(settings: settings, delivery: delivery, events: detector, clock: clock)
        let presence = Presence(registry: channels, delivery: delivery, settings: settings, clock: clock, events: detector)
        let gates = DonationGates(registry: channels, delivery: delivery, clock: clock)
        let subscriptions = Subscriptions(registry: channels, gates: gates, delivery: delivery, settings: settings, cluster: cluster)
        self.settings = settings
        self.channels = channels
        self.connections = connections
        self.gates = gates
        self.delivery = delivery
        self.subscriptions = subscriptions
        self.presence = presence
        self.publisher = Publisher(
            registry: channels, keeper: keeper, presence: presence, settings: settings, metrics: metrics, clock: clock, cluster: cluster)
        self.receiver = ClusterReceiver(
            registry: channels, connections: connections, keeper: keeper, presence: presence, subscriptions: subscriptions,
            delivery: delivery, settings: settings, metrics: metrics, clock: clock)
        self.metrics = metrics
        self.clock = clock
        self.cluster = cluster
    }

    // MARK: Connections

    /// Registers a newly opened connection whose frames go to `sink`, and counts it open. One over the
    /// per-identity limit (two upgrades raced past the check at the handshake) is closed at once with 4002.
    package func connect(identity: String, expiresAt: Int64, watch: WatchScope? = nil, sink: any FrameSink, logger: Logger) -> ClientConnection {
        let connection = ClientConnection(
            id: connections.makeID(), identity: identity, expiresAt: expiresAt, watch: watch, sink: sink, logger: logger)
        connections.insert(connection)
        let admitted = channels.locked(identity, create: true) { channel -> Bool in
            guard let channel else { return false }
            channel.connections += 1
            return channel.connections <= settings.maxConnectionsPerIdentity
        }
        metrics.connectionOpened(admitted: admitted)
        if !admitted {
            metrics.rejected(.limitReached)
            sink.close(code: CloseCode.tooManyConnections, reason: "too many connections for this identity", discardPending: true)
        }
        return connection
    }

    /// Whether `identity` may open another connection now.
    package func mayConnect(_ identity: String) -> Bool {
        channels.locked(identity, create: false) { ($0?.connections ?? 0) < settings.maxConnectionsPerIdentity }
    }

    /// Forgets a closed connection: its sink stops, its subscriptions end, and the volunteer goes offline with
    /// their last connection.
    package func disconnect(_ connection: ClientConnection) {
        guard forget(connection) else { return }
        channels.locked(connection.identity, create: false) { channel in
            guard let channel else { return }
            channel.connections -= 1
            if channel.connections == 0 && presence.markOffline(channel) {
                cluster?.announceOffline(channel: channel.name, lastSeen: channel.lastSeen)
            }
        }
        metrics.connectionClosed()
    }

    /// Unregisters `connection`, stops its sink and ends its subscriptions. - Returns: whether it was registered.
    func forget(_ connection: ClientConnection) -> Bool {
        guard connections.remove(connection) else { return false }
        connection.sink.finish()
        for channelName in connection.subscribedChannels {
            channels.locked(channelName, create: false) { channel in
                _ = channel?.removeSubscriber(connection.id)
            }
        }
        return true
    }

    /// Open connections.
    package var connectionCount: Int { connections.count }

    /// Waits until no connection (nor held poll) is open, at most until `deadline`, or until the task is cancelled.
    /// - Returns: whether none is open.
    package func connectionsGone(before deadline: ContinuousClock.Instant) async -> Bool {
        await connections.waitUntilEmpty(before: deadline)
    }

    /// The bytes queued for the fullest connection, for operations and tests.
    package var largestOutboxBytes: Int { connections.all.map(\.sink.queuedBytes).max() ?? 0 }

    /// Asks every connection to close with `code`, after the frames already queued.
    package func closeAll(code: UInt16, reason: String) { connections.closeAll(code: code, reason: reason) }

    /// Closes with 4001 every connection whose token has expired. Run once a second by the presence sweeper:
    /// one sweep costs less than a sleeping task per connection.
    package func closeExpiredConnections() { connections.closeExpired(nowSeconds: clock.now() / 1000) }

    /// Cuts every connection still open, without a close handshake (the end of the shutdown grace).
    package func abortAll() { connections.abortAll() }

    // MARK: Publish and subscribe

    /// What became of a published position.
    package struct PublishOutcome: Sendable, Equatable {
        /// The channel's seq it was kept under (the volunteer's own numbering, which no donor sees), or `nil` when it
        /// was kept for nobody.
        package var seq: Int64?
        package var watchers: Int
        /// Why it was kept for nobody, when it was.
        package var untracked: ServerFrame.UntrackedReason?
        package var tracking: Bool { seq != nil }
    }

    /// Publishes a validated position on `identity`'s own channel: from its WebSocket, or over HTTP (OwnTracks).
    /// Nothing of the sender but its identity plays a part, so a publish over HTTP counts as no open socket.
    package func publish(as identity: String, position: Position) -> Result<PublishOutcome, BrokerError> {
        publisher.publish(as: identity, position: position)
    }

    /// Publishes `position` on `connection`'s own channel, as ``publish(as:position:)`` with its identity, without
    /// hashing the identity again on every publish.
    package func publish(from connection: ClientConnection, position: Position) -> Result<PublishOutcome, BrokerError> {
        publisher.publish(on: ChannelRegistry.Key(connection.identity, hash: connection.channelHash), position: position)
    }

    /// Subscribes `connection` if one of its identity's donations allows it (``Subscriptions``).
    /// - Returns: the refusal, or `nil` when subscribed.
    package func subscribe(_ connection: ClientConnection, _ request: ClientFrame.Subscribe) -> BrokerError? {
        subscriptions.subscribe(connection, request)
    }

    /// Ends a subscription the client asked to end.
    /// - Returns: the refusal, or `nil` when unsubscribed.
    package func unsubscribe(_ connection: ClientConnection, _ request: ClientFrame.Unsubscribe) -> BrokerError? {
        subscriptions.unsubscribe(connection, request)
    }

    /// Queues a frame for one connection.
    package func reply(_ frame: ServerFrame, to connection: ClientConnection) {
        delivery.reply(frame, to: connection)
    }

    /// Reports offline every volunteer silent for longer than the presence timeout, and forgets the channels
    /// nothing refers to any more.
    package func sweepPresence() { presence.sweep() }

    // MARK: Donations

    /// Applies a durable change unless a newer one for the same donation was applied already: changes arrive
    /// from this node's API and, in a cluster, from the other nodes, in no guaranteed order between the two.
    /// - Returns: whether the change was applied.
    @discardableResult
    package func apply(_ change: DonationChange) -> Bool { gates.apply(change) }

    /// Rebuilds the gates from the store at start.
    package func load(_ snapshot: StoreSnapshot) { gates.load(snapshot) }

    /// Every store revision up to this one is accounted for on this node; a cluster node catches up on every
    /// change after it.
    package var completeRevision: Int64 { gates.completeRevision }

    /// Notes that the bus brought `revisions` (an announced change and the row read for it).
    /// - Returns: whether a revision below the highest of them was never seen: a gap to catch up on.
    package func noteSeen(_ revisions: Int64...) -> Bool { gates.noteSeen(revisions) }

    /// Notes that every revision up to `revision` is accounted for.
    package func noteAccounted(through revision: Int64) { gates.noteAccounted(through: revision) }

    /// Forgets the revisions of donations that ended long ago (run by the sweeper).
    package func pruneAppliedRevisions() { gates.prune() }

    // MARK: Cluster

    /// A position another node kept (``ClusterReceiver``).
    /// - Parameter viewSeqs: the position's seq in each donation's view, in the order of `donations`; `nil` from a
    ///   node that did not send them, for this node to number.
    package func receiveRemotePosition(channel: String, seq: Int64, position: Position, donations: [String], viewSeqs: [Int64]?, seenAt: Int64) {
        receiver.receivePosition(channel: channel, seq: seq, position: position, donations: donations, viewSeqs: viewSeqs, seenAt: seenAt)
    }

    /// The volunteer's last connection to another node closed.
    package func receiveRemoteOffline(channel: String, lastSeen: Int64?) {
        receiver.receiveOffline(channel: channel, lastSeen: lastSeen)
    }

    /// Takes in the stored last positions of a bus shard this node has just started to listen to.
    package func takeInStored(_ lastPositions: [LastPosition]) { receiver.takeInStored(lastPositions) }

    /// Takes in the channels' last positions the cluster stored, at start, after the donations are loaded.
    package func seed(_ lastPositions: [LastPosition]) { receiver.seed(lastPositions) }

    /// Answers subscriptions that waited for their bus shards.
    package func completePending(_ pending: [WaitingSubscription]) { receiver.completePending(pending) }

    /// The channels that have a subscriber on this node, for the bus to know which shards it still needs.
    package func subscribedChannelNames() -> [String] { channels.names(.subscribed) }
}
