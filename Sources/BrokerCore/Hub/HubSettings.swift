/// The part of the configuration the hub uses, in the units it uses.
///
/// No defaults here: every default is written once, in the broker's settings table (`BrokerConfiguration`,
/// docs/CONFIGURATION.md); the broker builds these from it, and the core's tests choose their own values.
package struct HubSettings: Sendable {
    /// Kept positions per channel.
    package var historySize: Int
    /// Metres from the destination that count as arrived.
    package var arrivalRadiusMeters: Double
    /// Positions per second per volunteer.
    package var publishRate: Double
    /// Burst above the rate.
    package var publishBurst: Int
    /// Milliseconds of silence after which a volunteer is reported offline (3 publish intervals).
    package var presenceTimeoutMilliseconds: Int64
    /// Subscriptions per connection.
    package var maxSubscriptionsPerConnection: Int
    /// Outbound queue bytes per connection.
    package var outboxBytes: Int
    /// How long an outbox may wait on its socket before the connection is closed as a slow consumer.
    package var slowConsumerStall: Duration
    /// Open WebSockets per identity.
    package var maxConnectionsPerIdentity: Int
    /// How far before a donation's trackable window opened a fix may be stamped and still count as inside
    /// it: phone clocks run a little behind the broker's.
    package var windowToleranceMilliseconds: Int64
    /// A fix older than this when it arrives is kept for nobody (`too-old`), even inside the window.
    package var maxPositionAgeMilliseconds: Int64

    package init(
        historySize: Int, arrivalRadiusMeters: Double, publishRate: Double, publishBurst: Int, presenceTimeoutMilliseconds: Int64,
        maxSubscriptionsPerConnection: Int, outboxBytes: Int, slowConsumerStall: Duration, maxConnectionsPerIdentity: Int,
        windowToleranceMilliseconds: Int64, maxPositionAgeMilliseconds: Int64
    ) {
        self.historySize = historySize
        self.arrivalRadiusMeters = arrivalRadiusMeters
        self.publishRate = publishRate
        self.publishBurst = publishBurst
        self.presenceTimeoutMilliseconds = presenceTimeoutMilliseconds
        self.maxSubscriptionsPerConnection = maxSubscriptionsPerConnection
        self.outboxBytes = outboxBytes
        self.slowConsumerStall = slowConsumerStall
        self.maxConnectionsPerIdentity = maxConnectionsPerIdentity
        self.windowToleranceMilliseconds = windowToleranceMilliseconds
        self.maxPositionAgeMilliseconds = maxPositionAgeMilliseconds
    }
}
