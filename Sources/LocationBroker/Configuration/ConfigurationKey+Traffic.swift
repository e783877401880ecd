import BrokerCore
// What clients may do and how fast: heartbeats, presence, history, rates and the limits that protect the broker.
extension ConfigurationKey {
    static let traffic: [ConfigurationKey] = [
        integer("heartbeat_seconds", \.heartbeatSeconds, 1...3600, "Seconds between WebSocket pings."),
        integer(
            "publish_interval_seconds", \.publishIntervalSeconds, 1...3600,
            "Volunteers' publish cadence; silent for 3 of these means offline."),
        integer("history_size", \.historySize, 1...10_000, "Kept positions per channel for since recovery."),
        number("arrival_radius_meters", \.arrivalRadiusMeters, 1...100_000, "Distance from the destination that counts as arrived."),
        number("publish_rate", \.publishRate, 0.001...100_000, "Positions per second per volunteer."),
        integer("publish_burst", \.publishBurst, 1...1_000_000, "Positions a volunteer may send in a burst."),
        integer("max_frame_bytes", \.maxFrameBytes, 256...1_048_576, "Largest client WebSocket frame."),
        integer("max_body_bytes", \.maxBodyBytes, 1024...16_777_216, "Largest HTTP request body."),
        integer("outbox_bytes", \.outboxBytes, 4096...67_108_864, "Outbound queue per connection before conflation and 4008."),
        integer("slow_consumer_seconds", \.slowConsumerSeconds, 1...3600, "Seconds a connection's queue may wait on its socket before 4008."),
        integer("max_connections_per_identity", \.maxConnectionsPerIdentity, 1...100_000, "Open WebSockets per identity."),
        integer(
            "max_invalid_frames_per_minute", \.maxInvalidFramesPerMinute, 1...100_000,
            "Refused frames an identity may be answered per minute, across its connections, before 4009."),
        integer(
            "max_refused_upgrades_per_minute", \.maxRefusedUpgradesPerMinute, 1...1_000_000,
            "Refused WebSocket upgrades a source address may have per minute before 429."),
        integer(
            "window_tolerance_ms", \.windowToleranceMilliseconds, 0...10_000,
            "Milliseconds a fix may predate its donation's trackable window, for phone clocks behind."),
        integer(
            "max_position_age_seconds", \.maxPositionAgeSeconds, 1...86_400,
            "Seconds after which a fix is kept for nobody, even inside the window."),
        integer(
            "handshake_timeout_seconds", \.handshakeTimeoutSeconds, 1...3600,
            "Seconds a new connection may take to send its first request."),
        integer(
            "request_timeout_seconds", \.requestTimeoutSeconds, 1...3600,
            "Seconds an HTTP request's body may take after its head, and a later request's head after a response."),
        integer("max_subscriptions_per_connection", \.maxSubscriptionsPerConnection, 1...10_000, "Subscriptions per connection."),
        integer("shutdown_grace_seconds", \.shutdownGraceSeconds, 0...3600, "Seconds SIGTERM waits for sockets to close."),
        integer(
            "pubnub_hold_seconds", \.pubNubHoldSeconds, 1...280,
            "Seconds a PubNub subscribe long poll is held when there is nothing to answer."),
        integer("pubnub_max_polls_per_identity", \.pubNubMaxPollsPerIdentity, 1...1000, "PubNub subscribe long polls one identity may have held at once."),
        integer("pubnub_max_polls", \.pubNubMaxPolls, 1...1_000_000, "PubNub subscribe long polls held at once, in all."),
    ]
}
