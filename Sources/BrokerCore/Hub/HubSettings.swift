/// The part of the configuration the hub uses, in the units it uses.
package struct HubSettings: Sendable {
    /// Kept positions per channel.
    package var historySize = 32
    /// Metres from the destination that count as arrived.
    package var arrivalRadiusMeters = 150.0
    /// Positions per second per volunteer.
    package var publishRate = 1.0
    /// Burst above the rate.
    package var publishBurst = 5
    /// Milliseconds of silence after which a volunteer is reported offline (3 publish intervals).
    package var presenceTimeoutMilliseconds: Int64 = 60_000
    /// Subscriptions per connection.
    package var maxSubscriptionsPerConnection = 16
    /// Outbound queue bytes per connection.
    package var outboxBytes = 262_144
    /// How long an outbox may wait on its socket before the connection is closed as a slow consumer.
    package var slowConsumerStall: Duration = .seconds(10)
    /// Open WebSockets per identity.
    package var maxConnectionsPerIdentity = 4
    /// How far before a donation's trackable window opened a fix may be stamped and still count as inside
    /// it: phone clocks run a little behind the broker's.
    package var windowToleranceMilliseconds: Int64 = 2_000
    /// A fix older than this when it arrives is kept for nobody (`too-old`), even inside the window.
    package var maxPositionAgeMilliseconds: Int64 = 600_000

    package init() {}
}
