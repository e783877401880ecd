import BrokerCore
import BrokerWebSocket
import Logging
import PostgresNIO
import ServiceLifecycle

extension Broker {
    /// Where donations and trip events are kept, the hub built over them, and, in a cluster, what links this node
    /// to the others.
    struct StorePart {
        let hub: Hub
        let store: any DonationStore
        let eventOutbox: any EventOutbox
        /// Whether a volunteer was heard on any node since a time, for the trip events' silence rule; `nil` on one
        /// node, where the hub alone knows.
        let heardSince: (@Sendable (String, Int64) async throws -> Bool)?
        /// The PostgreSQL pool and the cluster's bus; none on one node.
        let services: [any Service]
        /// Opens once the node listens to the other nodes; `nil` on one node.
        let listening: Latch?
        /// The donations the store holds as the broker starts.
        let activeDonations: Int
    }

    /// Opens the configured store (PostgreSQL for a cluster node, else SQLite) and builds the hub with the
    /// donations it holds.
    static func openStore(
        _ configuration: BrokerConfiguration, node: String, metrics: BrokerMetrics, clock: WallClock, eventRules: TrackingEventRules?,
        logger: Logger
    ) async throws -> StorePart {
        let settings = HubSettings(configuration)
        guard let location = configuration.store else {
            let hub = Hub(settings: settings, metrics: metrics, clock: clock, framing: TextFrame.framing, events: eventRules)
            // One queue for the donations and the event outbox, so a change and its events are one transaction.
            let database = try SQLiteDatabase.open(path: configuration.database)
            let sqlite = SQLiteDonationStore(database: database)
            let snapshot = try await sqlite.activeDonations()
            hub.load(snapshot)
            return StorePart(
                hub: hub, store: sqlite, eventOutbox: SQLiteEventOutbox(database: database), heardSince: nil, services: [], listening: nil,
                activeDonations: snapshot.donations.count)
        }
        // The configuration refuses a PostgreSQL store without cluster secrets.
        let keys = ClusterKeys(secrets: configuration.clusterSecrets ?? [])
        let outbox = ClusterOutbox(node: node, interest: ShardInterest(keys: keys))
        let hub = Hub(settings: settings, metrics: metrics, cluster: outbox, clock: clock, framing: TextFrame.framing, events: eventRules)
        let prepared = try await PostgresSchema.prepare(location, keys: keys, logger: logger)
        hub.load(prepared.snapshot)
        hub.seed(prepared.lastPositions)
        if prepared.rejected > 0 {
            metrics.clusterSealedRejected["store"]?.increment(by: Int64(prepared.rejected))
            logger.warning("stored last positions that do not open with the cluster secrets were ignored", metadata: ["rows": "\(prepared.rejected)"])
        }
        let client = PostgresClient(configuration: location.clientConfiguration(), backgroundLogger: logger)
        let postgres = PostgresDonationStore(client: client, node: node, keys: keys, logger: logger)
        let listening = Latch()
        let bus = PostgresBus(
            location: location, client: client, store: postgres, keys: keys, outbox: outbox, hub: hub, metrics: metrics, logger: logger,
            listening: listening, heartbeatPeriod: .seconds(configuration.clusterHeartbeatSeconds))
        logger.info("cluster node", metadata: ["node": "\(node)", "store": "\(location.description)"])
        return StorePart(
            hub: hub, store: postgres, eventOutbox: PostgresEventOutbox(client: client, logger: logger),
            heardSince: { channel, since in try await postgres.heard(channel: channel, since: since) },
            services: [PostgresClientService(client: client), bus], listening: listening, activeDonations: prepared.snapshot.donations.count)
    }
}
