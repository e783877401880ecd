import BrokerCore
import BrokerWebSocket
import PubNubCompatibility
import ServiceLifecycle

/// Once a second, reports offline the volunteers who have been silent for 3 publish intervals, and closes the
/// connections and held polls whose token has expired, wakes the held polls whose hold has ended, and forgets the
/// revisions of donations that ended long ago and the refusal budgets that have refilled.
struct PresenceSweeper: Service {
    let hub: Hub
    var budgets: [RefusalBudget] = []
    /// The PubNub endpoints' held polls.
    var polls: LongPollSlots?
    var period: Duration = .seconds(1)

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: period)
                hub.sweepPresence()
                hub.closeExpiredConnections()
                polls?.wakeEndedHolds()
                hub.pruneAppliedRevisions()
                for budget in budgets { budget.sweep() }
            }
        }
    }
}
