import Foundation

/// What `location-broker check-config` prints: every setting's effective value and where it came from, with
/// secrets masked, so an operator can see what `serve` would run with before running it.
struct ConfigurationReport: Sendable {
    /// One setting as it stands.
    struct Line: Sendable, Equatable {
        let key: String
        /// The effective value, `(unset)` when the setting has none, or a mask for a secret.
        let value: String
        /// `default`, `file PATH`, `environment VARIABLE` or `command line`.
        let source: String
    }

    let lines: [Line]

    /// Settings whose values are never printed: only whether they are set, and their length.
    static let secretKeys: Set<String> = ["jwt_secret", "backend_key", "cluster_secret"]

    init(_ configuration: BrokerConfiguration, sources: [String: String]) {
        lines = ConfigurationKey.all.map { key in
            Line(key: key.name, value: Self.shown(key.name, in: configuration), source: sources[key.name] ?? "default")
        }
    }

    /// The report as text: one `key = value  (source)` line per setting, in the docs' order.
    var text: String {
        let width = lines.map(\.key.count).max() ?? 0
        return lines.map { "\($0.key.padding(toLength: width, withPad: " ", startingAt: 0)) = \($0.value)  (\($0.source))" }
            .joined(separator: "\n") + "\n"
    }

    private static func shown(_ key: String, in configuration: BrokerConfiguration) -> String {
        if secretKeys.contains(key) {
            let secrets: [String]? =
                switch key {
                case "jwt_secret": configuration.jwtSecret.map { [$0] }
                case "backend_key": configuration.backendKey.map { [$0] }
                default: configuration.clusterSecrets
                }
            guard let secrets else { return "(unset)" }
            return secrets.map { "*** (\($0.utf8.count) bytes)" }.joined(separator: ", ")
        }
        return value(of: key, in: configuration) ?? "(unset)"
    }

    /// The effective value of every setting that is not a secret; `nil` when it is unset. A key missing here is
    /// caught by `ConfigurationReportTests`, which goes through every key.
    static func value(of key: String, in c: BrokerConfiguration) -> String? {
        switch key {
        case "host": c.host
        case "port": "\(c.port)"
        case "database": c.database
        // The description never holds the password.
        case "store": c.store?.description
        case "store_password_file": c.storePasswordFile
        case "cluster_heartbeat_seconds": "\(c.clusterHeartbeatSeconds)"
        case "node_id": c.nodeID
        case "jwks_url": c.jwksURL?.absoluteString
        case "jwks_file": c.jwksFile
        case "identity_claim": c.identityClaim
        case "require_email_verified": "\(c.requireEmailVerified)"
        case "audience": c.audience
        case "issuer": c.issuer
        case "watch_token_ttl_seconds": "\(c.watchTokenTTLSeconds)"
        case "heartbeat_seconds": "\(c.heartbeatSeconds)"
        case "publish_interval_seconds": "\(c.publishIntervalSeconds)"
        case "history_size": "\(c.historySize)"
        case "arrival_radius_meters": "\(c.arrivalRadiusMeters)"
        case "publish_rate": "\(c.publishRate)"
        case "publish_burst": "\(c.publishBurst)"
        case "max_frame_bytes": "\(c.maxFrameBytes)"
        case "max_body_bytes": "\(c.maxBodyBytes)"
        case "outbox_bytes": "\(c.outboxBytes)"
        case "slow_consumer_seconds": "\(c.slowConsumerSeconds)"
        case "max_connections_per_identity": "\(c.maxConnectionsPerIdentity)"
        case "max_invalid_frames_per_minute": "\(c.maxInvalidFramesPerMinute)"
        case "window_tolerance_ms": "\(c.windowToleranceMilliseconds)"
        case "max_position_age_seconds": "\(c.maxPositionAgeSeconds)"
        case "handshake_timeout_seconds": "\(c.handshakeTimeoutSeconds)"
        case "max_subscriptions_per_connection": "\(c.maxSubscriptionsPerConnection)"
        case "shutdown_grace_seconds": "\(c.shutdownGraceSeconds)"
        case "tls_cert": c.tlsCert
        case "tls_key": c.tlsKey
        case "log_level": c.logLevel
        case "log_format": c.logFormat
        case "leaflet_folder": c.map.leafletFolder
        case "map_tiles_file": c.map.tilesFile
        case "map_tiles_url": c.map.tilesURL?.text
        case "map_tiles_attribution": c.map.tilesAttribution
        default: "(not shown: add it to ConfigurationReport.value)"
        }
    }
}
