import BrokerCore
import BrokerPostgres
import BrokerProtocol
import Prometheus

/// The broker's Prometheus metrics, one registry per broker so that tests can run several in one process.
///
/// Counters are atomics: incrementing one on the publish path takes no lock.
package final class BrokerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

    /// Open WebSocket connections.
    let connections: Gauge
    /// WebSocket connections accepted since start.
    let connectionsAccepted: Counter
    /// Client frames received, by type.
    let framesIn: FramesIn
    /// Frames handed to connections' writers.
    let framesOut: Counter
    /// Positions handed to subscribers (one per subscriber).
    let deliveries: Counter
    /// Positions kept on a channel (tracking on).
    let positionsKept: Counter
    /// Positions kept for nobody (neither kept nor forwarded), by why: no trackable donation, taken before
    /// the window opened, too old.
    let positionsUntracked: [ServerFrame.UntrackedReason: Counter]
    /// Older positions replaced in a full outbound queue.
    let conflations: Counter
    /// Connections closed because their outbound queue overflowed (4008).
    let slowConsumers: Counter
    /// Refused requests, by error code, on the WebSocket and the HTTP API.
    let rejections: [ErrorCode: Counter]
    /// Backend API requests that changed a donation.
    let donationUpdates: Counter
    /// Watch links made (`POST /v1/donations/{id}/watch-token`).
    let watchTokensIssued: Counter
    /// The cluster bus's series (BrokerPostgres counts them; they stay at zero on one node).
    let cluster: ClusterMetrics
    /// JWKS reads (start and refreshes), by result (ok, failed).
    let jwksRefreshes: [Bool: Counter]
    /// Keys in the JWKS in force.
    let jwksKeys: Gauge
    /// Trip events, their webhooks and their pushes.
    let events: EventMetrics

    package init() {
        connections = registry.makeGauge(descriptor: Self.describe("broker_connections", "Open WebSocket connections."))
        connectionsAccepted = registry.makeCounter(descriptor: Self.describe("broker_connections_accepted_total", "WebSocket connections accepted."))
        framesIn = FramesIn(registry: registry)
        framesOut = registry.makeCounter(descriptor: Self.describe("broker_frames_out_total", "Frames written to WebSocket clients."))
        deliveries = registry.makeCounter(descriptor: Self.describe("broker_deliveries_total", "Positions handed to subscribers."))
        positionsKept = registry.makeCounter(descriptor: Self.describe("broker_positions_kept_total", "Positions kept and forwarded."))
        var positionsUntracked: [ServerFrame.UntrackedReason: Counter] = [:]
        for reason in ServerFrame.UntrackedReason.allCases {
            positionsUntracked[reason] = registry.makeCounter(
                descriptor: Self.describe("broker_positions_untracked_total", "Positions kept for nobody, by reason."), labels: [("reason", reason.rawValue)])
        }
        self.positionsUntracked = positionsUntracked
        conflations = registry.makeCounter(descriptor: Self.describe("broker_conflations_total", "Queued positions replaced by newer ones."))
        slowConsumers = registry.makeCounter(descriptor: Self.describe("broker_slow_consumers_total", "Connections closed with 4008."))
        var rejections: [ErrorCode: Counter] = [:]
        for code in ErrorCode.allCases {
            rejections[code] = registry.makeCounter(descriptor: Self.describe("broker_rejections_total", "Refused requests, by error code."), labels: [("code", code.rawValue)])
        }
        self.rejections = rejections
        donationUpdates = registry.makeCounter(descriptor: Self.describe("broker_donation_updates_total", "Donation changes applied."))
        watchTokensIssued = registry.makeCounter(descriptor: Self.describe("broker_watch_tokens_issued_total", "Watch links made for donors."))
        cluster = ClusterMetrics(registry: registry, describe: Self.describe)
        var jwksRefreshes: [Bool: Counter] = [:]
        for (succeeded, result) in [(true, "ok"), (false, "failed")] {
            jwksRefreshes[succeeded] = registry.makeCounter(
                descriptor: Self.describe("broker_jwks_refreshes_total", "JWKS reads, by result; a failed one keeps the last good key set."),
                labels: [("result", result)])
        }
        self.jwksRefreshes = jwksRefreshes
        jwksKeys = registry.makeGauge(descriptor: Self.describe("broker_jwks_keys", "Keys in the JWKS in force."))
        events = EventMetrics(registry: registry, describe: Self.describe)
    }

    /// Splits `broker_<name>[_total]` into Prometheus' name parts.
    static func describe(_ fullName: String, _ help: String) -> MetricNameDescriptor {
        var name = fullName.dropFirst("broker_".count)
        var unit = ""
        if name.hasSuffix("_total") {
            name = name.dropLast("_total".count)
            unit = "total"
        }
        return MetricNameDescriptor(namespace: "broker", metricName: String(name), unitName: unit, helpText: help)
    }

    /// Counts a refusal.
    func reject(_ code: ErrorCode) {
        rejections[code]?.increment()
    }

    /// Counts a JWKS read and sets the number of keys in force.
    func recordJWKSRefresh(succeeded: Bool, keys: Int) {
        jwksRefreshes[succeeded]?.increment()
        jwksKeys.set(Double(keys))
    }

    /// The value of one series of the exposition, such as `broker_rejections_total{code="forbidden"}`.
    func value(of series: String) -> Double? {
        for line in exposition().split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    /// The metrics in Prometheus text format.
    func exposition() -> String {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self) + ProcessMetrics.exposition()
    }
}

/// What the core reports, counted in the registry: one call per publish on the fan-out path.
extension BrokerMetrics: HubMetrics {
    package func connectionOpened(admitted: Bool) {
        connections.increment()
        if admitted { connectionsAccepted.increment() }
    }

    package func connectionClosed() {
        connections.decrement()
    }

    package func rejected(_ code: ErrorCode) {
        reject(code)
    }

    package func untracked(_ reason: ServerFrame.UntrackedReason) {
        positionsUntracked[reason]?.increment()
    }

    package func kept(_ fanOut: FanOutTally) {
        positionsKept.increment()
        deliveries.increment(by: Int64(fanOut.delivered))
        if fanOut.conflated > 0 { conflations.increment(by: Int64(fanOut.conflated)) }
        if fanOut.overflowed > 0 { slowConsumers.increment(by: Int64(fanOut.overflowed)) }
    }

    package func queued(_ result: EnqueueResult) {
        switch result {
        case .conflated: conflations.increment()
        case .overflowed: slowConsumers.increment()
        case .queued, .closed: break
        }
    }
}

extension BrokerMetrics {
    /// `broker_frames_in_total`'s counters, one per `type` label, held as fields: counting a frame is an atomic
    /// add, not a string hashed and a dictionary searched per frame.
    struct FramesIn: Sendable {
        let publish: Counter
        let subscribe: Counter
        let unsubscribe: Counter
        /// Frames refused as malformed or against the protocol.
        let invalid: Counter

        fileprivate init(registry: PrometheusCollectorRegistry) {
            func counter(_ type: String) -> Counter {
                registry.makeCounter(descriptor: BrokerMetrics.describe("broker_frames_in_total", "Client frames received, by type."), labels: [("type", type)])
            }
            publish = counter("publish")
            subscribe = counter("subscribe")
            unsubscribe = counter("unsubscribe")
            invalid = counter("invalid")
        }
    }
}
