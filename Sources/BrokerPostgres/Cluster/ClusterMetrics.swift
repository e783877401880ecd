import Prometheus

/// What the cluster bus counts, in the broker's registry: the events it sends and hears, what it drops or refuses,
/// and whether this node listens to the others.
package struct ClusterMetrics: Sendable {
    /// Events sent to the other nodes.
    let clusterEventsOut: Counter
    /// Events received from the other nodes, by kind (position, offline, donation).
    let clusterEventsIn: [String: Counter]
    /// Events dropped because PostgreSQL was unreachable for longer than the queue holds, or unreadable.
    let clusterEventsDropped: Counter
    /// 1 while this node listens to the other nodes and hears its own heartbeats, 0 otherwise.
    let clusterConnected: Gauge
    /// Sealed payloads that did not open with the cluster secrets (forged, altered, replayed onto another purpose, or
    /// sealed with a secret this node does not have), by where they came from (bus, store).
    let clusterSealedRejected: [String: Counter]
    /// Heartbeats the listening session did not hear back in time (each one reconnects the listener).
    let clusterHeartbeatsMissed: Counter
    /// Catch-ups on donation changes after a gap (a reconnection or a revision the bus did not bring).
    let clusterCatchUps: Counter
    /// The bus shards this node listens to (those in which it has subscribers), out of 64.
    let clusterShardsListened: Gauge

    /// The cluster's series, made in `registry`; `describe` splits a full metric name into Prometheus' parts.
    package init(registry: PrometheusCollectorRegistry, describe: (String, String) -> MetricNameDescriptor) {
        clusterEventsOut = registry.makeCounter(descriptor: describe("broker_cluster_events_out_total", "Events sent to the other nodes."))
        var clusterEventsIn: [String: Counter] = [:]
        for kind in ["position", "offline", "donation"] {
            clusterEventsIn[kind] = registry.makeCounter(descriptor: describe("broker_cluster_events_in_total", "Events received from the other nodes, by kind."), labels: [("kind", kind)])
        }
        self.clusterEventsIn = clusterEventsIn
        clusterEventsDropped = registry.makeCounter(descriptor: describe("broker_cluster_events_dropped_total", "Cluster events dropped: queue full while PostgreSQL was unreachable, or unreadable."))
        clusterConnected = registry.makeGauge(descriptor: describe("broker_cluster_connected", "1 while this node listens to the other nodes and hears its heartbeats."))
        var clusterSealedRejected: [String: Counter] = [:]
        for source in ["bus", "store"] {
            clusterSealedRejected[source] = registry.makeCounter(
                descriptor: describe("broker_cluster_sealed_rejected_total", "Sealed payloads that did not open with the cluster secrets, dropped unapplied."),
                labels: [("source", source)])
        }
        self.clusterSealedRejected = clusterSealedRejected
        clusterHeartbeatsMissed = registry.makeCounter(descriptor: describe("broker_cluster_heartbeats_missed_total", "Heartbeats the listening session did not hear back in time."))
        clusterCatchUps = registry.makeCounter(descriptor: describe("broker_cluster_catch_ups_total", "Catch-ups on donation changes read from the store after a gap."))
        clusterShardsListened = registry.makeGauge(descriptor: describe("broker_cluster_shards_listened", "Bus shards this node listens to: those in which it has subscribers, out of 64."))
    }
}
