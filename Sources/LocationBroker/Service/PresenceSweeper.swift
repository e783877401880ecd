import BrokerCore
import ServiceLifecycle

/// Once a second, reports offline the volunteers who have been silent for 3 publish intervals, and closes the
/// connections whose token has expired, and forgets the revisions of donations that ended long ago.
struct PresenceSweeper: Service {
    let hub: Hub
    var period: Duration = .seconds(1)

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: period)
                hub.sweepPresence()
                hub.closeExpiredConnections()
                hub.pruneAppliedRevisions()
            }
        }
    }
}
