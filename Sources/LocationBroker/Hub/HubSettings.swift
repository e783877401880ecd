/// The part of the configuration the hub uses, in the units it uses.
struct HubSettings: Sendable {
    /// Kept positions per channel.
    var historySize = 32
    /// Metres from the destination that count as arrived.
    var arrivalRadiusMeters = 150.0
    /// Positions per second per volunteer.
    var publishRate = 1.0
    /// Burst above the rate.
    var publishBurst = 5
    /// Milliseconds of silence after which a volunteer is reported offline (3 publish intervals).
    var presenceTimeoutMilliseconds: Int64 = 60_000
    /// Subscriptions per connection.
    var maxSubscriptionsPerConnection = 16
    /// Outbound queue bytes per connection.
    var outboxBytes = 262_144
    /// How long an outbox may wait on its socket before the connection is closed as a slow consumer.
    var slowConsumerStall: Duration = .seconds(10)
    /// Open WebSockets per identity.
    var maxConnectionsPerIdentity = 4
    /// How far before a donation's trackable window opened a fix may be stamped and still count as inside
    /// it: phone clocks run a little behind the broker's.
    var windowToleranceMilliseconds: Int64 = 2_000
    /// A fix older than this when it arrives is kept for nobody (`too-old`), even inside the window.
    var maxPositionAgeMilliseconds: Int64 = 600_000

    init() {}

    init(_ configuration: BrokerConfiguration) {
        historySize = configuration.historySize
        arrivalRadiusMeters = configuration.arrivalRadiusMeters
        publishRate = configuration.publishRate
        publishBurst = configuration.publishBurst
        presenceTimeoutMilliseconds = Int64(configuration.publishIntervalSeconds) * 3 * 1000
        maxSubscriptionsPerConnection = configuration.maxSubscriptionsPerConnection
        outboxBytes = configuration.outboxBytes
        slowConsumerStall = .seconds(Int64(configuration.slowConsumerSeconds))
        maxConnectionsPerIdentity = configuration.maxConnectionsPerIdentity
        windowToleranceMilliseconds = Int64(configuration.windowToleranceMilliseconds)
        maxPositionAgeMilliseconds = Int64(configuration.maxPositionAgeSeconds) * 1000
    }
}
