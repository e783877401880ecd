import BrokerProtocol

/// What the hub tells the other nodes of a cluster, and asks of the bus. The cluster's outbox
/// (`ClusterOutbox`, PostgreSQL) conforms; a single node has none and pays nothing for clustering.
///
/// Called under a channel's shard lock: every method returns without waiting.
package protocol ClusterLink: Sendable {
    /// Queues a position this node kept on `channel` under `seq`, for the donations in `donations`, numbered
    /// `viewSeqs` in their views (in the same order).
    func announcePosition(channel: String, seq: Int64, position: Position, donations: [String], viewSeqs: [Int64], seenAt: Int64)
    /// Queues that the volunteer's last connection to this node closed.
    func announceOffline(channel: String, lastSeen: Int64?)
    /// Called by a subscription that passed every check.
    /// - Returns: `true` to answer it now; `false` when the bus keeps it, to be answered once this node listens
    ///   to the volunteer's bus shard (``Hub/completePending(_:)``).
    func admitSubscription(_ waiting: WaitingSubscription) -> Bool
    /// Withdraws the waiting subscription of `connection` to `channel` (any when `nil`) for `donation` (any when
    /// `nil`): the client unsubscribed before it was answered.
    func withdrawSubscription(connection: UInt64, channel: String?, donation: String?) -> WaitingSubscription?
}

/// A subscription that passed every check and waits for the bus.
package struct WaitingSubscription: Sendable {
    package let connection: ClientConnection
    package let request: ClientFrame.Subscribe
    /// The volunteer channel and the donation it was admitted for.
    package let channel: String
    package let donation: String

    package init(connection: ClientConnection, request: ClientFrame.Subscribe, channel: String, donation: String) {
        self.connection = connection
        self.request = request
        self.channel = channel
        self.donation = donation
    }
}
