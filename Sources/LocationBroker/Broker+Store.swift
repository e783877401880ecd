import BrokerCore
import BrokerPostgres
import BrokerSQLite
import BrokerStorage
import BrokerWebSocket
import Logging
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
            let sqlite = try SQLiteStorage(path: configuration.database)
            let snapshot = try await sqlite.store.activeDonations()
            hub.load(snapshot)
            return StorePart(
                hub: hub, store: sqlite.store, eventOutbox: sqlite.eventOutbox, heardSince: nil, services: [], listening: nil,
                activeDonations: snapshot.donations.count)
        }
        // The configuration refuses a PostgreSQL store without cluster secrets.
        let cluster = try await ClusterNode(
            location: location, secrets: configuration.clusterSecrets ?? [], node: node, metrics: metrics.cluster,
            heartbeatPeriod: .seconds(configuration.clusterHeartbeatSeconds), logger: logger
        ) { link in
            Hub(settings: settings, metrics: metrics, cluster: link, clock: clock, framing: TextFrame.framing, events: eventRules)
        }
        logger.info("cluster node", metadata: ["node": "\(node)", "store": "\(location.description)"])
        return StorePart(
            hub: cluster.hub, store: cluster.store, eventOutbox: cluster.eventOutbox, heardSince: cluster.heardSince,
            services: cluster.services, listening: cluster.listening, activeDonations: cluster.activeDonations)
    }
}
