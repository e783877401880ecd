import BrokerStorage
import Prometheus

/// The metrics of trip events: how many were decided and stored, and how their deliveries (webhooks to the
/// backend, pushes to donors) stand. The gauges are read from the outbox every few seconds, so they are the
/// whole cluster's figures, the same on every node.
final class EventMetrics: Sendable {
    /// Events stored in the outbox, by type.
    let stored: [String: Counter]
    /// Events lost before the outbox took them (the store was down until the recorder's list was full).
    let dropped: Counter
    /// Delivery attempts, by route (webhook, push) and outcome: `sent`, `retry` (failed, tried again later),
    /// `failed` (given up, kept for an operator), `gone` (a push subscription the push service no longer knows),
    /// `dropped` (a push retry not sent because its donation ended or its browser unsubscribed).
    private let attempts: [String: Counter]
    /// Deliveries waiting, by route, including those waiting for a retry.
    let pending: [OutboxRoute: Gauge]
    /// Deliveries waiting for a retry after a failed attempt, by route.
    let retrying: [OutboxRoute: Gauge]
    /// Deliveries given up and kept for an operator, by route.
    let failed: [OutboxRoute: Gauge]
    /// Seconds since the oldest waiting delivery's event happened, by route (0 when none waits).
    let oldestPendingSeconds: [OutboxRoute: Gauge]
    /// Web Push subscriptions made by donors.
    let subscriptionsAdded: Counter

    static let types = [
        "tracking.started", "tracking.first_position", "tracking.approaching", "tracking.arrived", "tracking.paused", "tracking.resumed",
        "tracking.ended", "tracking.silent", "tracking.back",
    ]
    static let outcomes = ["sent", "retry", "failed", "gone", "dropped"]

    init(registry: PrometheusCollectorRegistry, describe: (String, String) -> MetricNameDescriptor) {
        var stored: [String: Counter] = [:]
        for type in Self.types {
            stored[type] = registry.makeCounter(
                descriptor: describe("broker_events_total", "Trip events stored in the outbox, by type."), labels: [("type", type)])
        }
        self.stored = stored
        dropped = registry.makeCounter(
            descriptor: describe("broker_events_dropped_total", "Trip events lost because the store could not take them for too long."))
        var attempts: [String: Counter] = [:]
        var pending: [OutboxRoute: Gauge] = [:]
        var retrying: [OutboxRoute: Gauge] = [:]
        var failed: [OutboxRoute: Gauge] = [:]
        var oldest: [OutboxRoute: Gauge] = [:]
        for route in [OutboxRoute.webhook, .push] {
            for outcome in Self.outcomes {
                attempts["\(route.rawValue)/\(outcome)"] = registry.makeCounter(
                    descriptor: describe("broker_event_deliveries_total", "Event delivery attempts, by route and outcome."),
                    labels: [("route", route.rawValue), ("outcome", outcome)])
            }
            pending[route] = registry.makeGauge(
                descriptor: describe("broker_event_deliveries_pending", "Event deliveries waiting, retries included, by route."),
                labels: [("route", route.rawValue)])
            retrying[route] = registry.makeGauge(
                descriptor: describe("broker_event_deliveries_retrying", "Event deliveries waiting for a retry, by route."),
                labels: [("route", route.rawValue)])
            failed[route] = registry.makeGauge(
                descriptor: describe("broker_event_deliveries_failed", "Event deliveries given up and kept for an operator, by route."),
                labels: [("route", route.rawValue)])
            oldest[route] = registry.makeGauge(
                descriptor: describe("broker_event_oldest_pending_seconds", "Age of the oldest waiting event delivery, by route."),
                labels: [("route", route.rawValue)])
        }
        self.attempts = attempts
        self.pending = pending
        self.retrying = retrying
        self.failed = failed
        self.oldestPendingSeconds = oldest
        subscriptionsAdded = registry.makeCounter(
            descriptor: describe("broker_push_subscriptions_added_total", "Web Push subscriptions donors made."))
    }

    /// Counts one delivery attempt's outcome.
    func attempt(_ route: OutboxRoute, _ outcome: String) {
        attempts["\(route.rawValue)/\(outcome)"]?.increment()
    }

    /// Sets the gauges of `route` from the outbox's figures.
    func update(_ route: OutboxRoute, _ stats: OutboxStats) {
        pending[route]?.set(Int64(stats.pending))
        retrying[route]?.set(Int64(stats.retrying))
        failed[route]?.set(Int64(stats.failed))
        oldestPendingSeconds[route]?.set(Double(stats.oldestPendingAge) / 1000)
    }
}
