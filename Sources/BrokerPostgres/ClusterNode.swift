import BrokerCore
import BrokerStorage
import Logging
import PostgresNIO
import ServiceLifecycle

/// A cluster node's part in PostgreSQL, opened: the schema migrated, the hub loaded with the donations and last
/// positions the store holds, the donation store and event outbox on one pool, and the services (the pool and the
/// bus) that link this node's hub to the other nodes' while the broker runs.
package struct ClusterNode: Sendable {
    /// The hub `makeHub` built, announcing to the other nodes through the bus.
    package let hub: Hub
    package let store: any DonationStore
    package let eventOutbox: any EventOutbox
    /// Whether any node heard a volunteer since a time (milliseconds since the epoch), for the trip events' silence
    /// rule: this node hears only the bus shards it has subscribers in.
    package let heardSince: @Sendable (String, Int64) async throws -> Bool
    /// The PostgreSQL pool and the cluster bus, to run for as long as the broker runs.
    package let services: [any Service]
    /// Opens once the node listens to the other nodes.
    package let listening: Latch
    /// The donations the store holds as the node starts.
    package let activeDonations: Int

    /// Migrates the schema at `location` (refusing one a newer release migrated), builds the hub with `makeHub`
    /// (given the link it announces through), and loads it with what the store holds.
    /// - Parameters:
    ///   - secrets: the cluster secrets, newest first (at least one: the configuration refuses a store without).
    ///   - node: this node's name, stamped on what it sends.
    ///   - heartbeatPeriod: how often the bus checks that it hears its own heartbeat.
    package init(
        location: PostgresLocation, secrets: [String], node: String, metrics: ClusterMetrics, heartbeatPeriod: Duration, logger: Logger,
        makeHub: (any ClusterLink) -> Hub
    ) async throws {
        let keys = ClusterKeys(secrets: secrets)
        let outbox = ClusterOutbox(node: node, interest: ShardInterest(keys: keys))
        let hub = makeHub(outbox)
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
            listening: listening, heartbeatPeriod: heartbeatPeriod)
        self.hub = hub
        store = postgres
        eventOutbox = PostgresEventOutbox(client: client, logger: logger)
        heardSince = { channel, since in try await postgres.heard(channel: channel, since: since) }
        services = [PostgresClientService(client: client), bus]
        self.listening = listening
        activeDonations = prepared.snapshot.donations.count
    }
}
