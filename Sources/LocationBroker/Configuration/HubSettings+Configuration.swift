import BrokerCore

extension HubSettings {
    /// The hub's settings read from the broker's configuration, in the units the hub uses.
    package init(_ configuration: BrokerConfiguration) {
        self.init(
            historySize: configuration.historySize,
            arrivalRadiusMeters: configuration.arrivalRadiusMeters,
            publishRate: configuration.publishRate,
            publishBurst: configuration.publishBurst,
            presenceTimeoutMilliseconds: Int64(configuration.publishIntervalSeconds) * 3 * 1000,
            maxSubscriptionsPerConnection: configuration.maxSubscriptionsPerConnection,
            outboxBytes: configuration.outboxBytes,
            slowConsumerStall: .seconds(Int64(configuration.slowConsumerSeconds)),
            maxConnectionsPerIdentity: configuration.maxConnectionsPerIdentity,
            windowToleranceMilliseconds: Int64(configuration.windowToleranceMilliseconds),
            maxPositionAgeMilliseconds: Int64(configuration.maxPositionAgeSeconds) * 1000)
    }
}
