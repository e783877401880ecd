// TEMPORARY: stands in for the outbox helper's definitions until its branch is merged.
import BrokerCore

package struct OutboxEvent: Sendable, Equatable {
    package var id: String
    package var donation: String
    package var incarnation: String
    package var type: String
    package var occurredAt: Int64
    package var body: String
    package var push: PushMessage?
}
package struct PushMessage: Sendable, Equatable, Codable {
    package var title: String
    package var body: String
    package var tag: String
    package var urgency: String
    package var ttlSeconds: Int
    package var topic: String
}
enum OutboxRoute: String, Sendable { case webhook, push }
package struct ClaimedEvent: Sendable { var event: OutboxEvent; var attempts: Int }
package struct FailedEvent: Sendable { var event: OutboxEvent; var attempts: Int; var error: String }
package struct OutboxStats: Sendable { var pending: Int; var retrying: Int; var failed: Int; var oldestPendingAge: Int64? }
package struct PushSubscriptionRecord: Sendable, Equatable {
    package var donation: String
    package var incarnation: String
    package var endpoint: String
    package var p256dh: String
    package var auth: String
    package var createdAt: Int64
}
protocol EventOutbox: Sendable {
    func append(_ events: [OutboxEvent]) async throws
    func claim(_ route: OutboxRoute, node: String, now: Int64, lease: Int64, limit: Int) async throws -> [ClaimedEvent]
    func delivered(_ id: String, route: OutboxRoute, node: String, at: Int64) async throws
    func retry(_ id: String, route: OutboxRoute, node: String, attempts: Int, nextAttemptAt: Int64, error: String) async throws
    func failed(_ id: String, route: OutboxRoute, node: String, attempts: Int, error: String) async throws
    func failedEvents(route: OutboxRoute, limit: Int) async throws -> [FailedEvent]
    func requeue(route: OutboxRoute, id: String?, now: Int64) async throws -> Int
    func stats(route: OutboxRoute, now: Int64) async throws -> OutboxStats
    func prune(deliveredBefore before: Int64) async throws -> Int
    func addSubscription(_ s: PushSubscriptionRecord, limit: Int) async throws -> Bool
    func subscriptions(donation: String, incarnation: String) async throws -> [PushSubscriptionRecord]
    func removeSubscription(endpoint: String) async throws
    func removeSubscriptions(donation: String) async throws
}
