import BrokerCore
import BrokerWebSocket
import ServiceLifecycle

/// Once a second, reports offline the volunteers who have been silent for 3 publish intervals, and closes the
/// connections whose token has expired, and forgets the revisions of donations that ended long ago and the
/// refusal budgets that have refilled.
struct PresenceSweeper: Service {
    let hub: Hub
    var budgets: [RefusalBudget] = []
    var period: Duration = .seconds(1)

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: period)
                hub.sweepPresence()
                hub.closeExpiredConnections()
                hub.pruneAppliedRevisions()
                for budget in budgets { budget.sweep() }
            }
        }
    }
}
