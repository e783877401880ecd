import Foundation

/// One setting: its name in the YAML file, its environment variable, its meaning, and how to apply a text value.
struct ConfigurationKey: Sendable {
    /// The key in the YAML file, snake_case.
    let name: String
    /// One line for `--help` and docs/CONFIGURATION.md.
    let summary: String
    /// Parses `text` into the configuration, or returns what is wrong with it.
    let apply: @Sendable (inout BrokerConfiguration, String) -> String?

    /// The environment variable that sets this key.
    var environmentVariable: String { "LOCATION_BROKER_" + name.uppercased() }

    /// Every setting the broker knows, in the order the docs list them.
    static let all: [ConfigurationKey] = [
        text("host", "Address to listen on (default 127.0.0.1).") { $0.host = $1 },
        integer("port", "TCP port; 0 picks a free one (default 8080).", 0...65535) { $0.port = $1 },
        text("database", "SQLite file for donations, created on first start (default data/broker.sqlite).") { $0.database = $1 },
        Self(name: "store", summary: "postgres://user@host/db to share donations and fan-out with other nodes; unset: the SQLite database.") {
            configuration, text in
            do {
                configuration.store = try PostgresLocation(text)
                return nil
            } catch {
                return "\(error)"
            }
        },
        text("store_password_file", "File holding the password of store's PostgreSQL user (instead of one in the URL).") {
            $0.storePasswordFile = $1
        },
        text("cluster_secret", "With store: secrets sealing the cluster's bus and stored positions, comma-separated, 32 bytes or more each; the first seals.") {
            $0.clusterSecrets = $1.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
        },
        integer("cluster_heartbeat_seconds", "With store: seconds between the listener's sealed round trips, and how long one may take (default 5).", 1...60) {
            $0.clusterHeartbeatSeconds = $1
        },
        text("node_id", "This node's name in a cluster, unique per running node (default: host name and process id).") { $0.nodeID = $1 },
        text("jwt_secret", "HS256 secret for client tokens, 32 bytes or more. Required unless jwks_url or jwks_file is set.") {
            $0.jwtSecret = $1
        },
        Self(name: "jwks_url", summary: "HTTPS URL of a JWKS (RS256/ES256 keys, for example Firebase's), refreshed in the background.") {
            configuration, text in
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
                return "must be an https:// URL, not '\(text)'"
            }
            // Keys fetched in clear could be swapped by anyone on the path; plain HTTP only on this machine.
            guard scheme == "https" || (scheme == "http" && ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host.lowercased())) else {
                return "must be an https:// URL (http:// only for 127.0.0.1, ::1 or localhost), not '\(text)'"
            }
            configuration.jwksURL = url
            return nil
        },
        text("jwks_file", "JWKS file with RS256/ES256 public keys for client tokens, read again when it changes or on SIGHUP.") { $0.jwksFile = $1 },
        text("identity_claim", "Token claim holding the identity (default sub; Firebase: email).") { $0.identityClaim = $1 },
        boolean("require_email_verified", "With identity_claim email, tokens must carry email_verified: true (default true).") {
            $0.requireEmailVerified = $1
        },
        text("audience", "Tokens must carry this aud. Required with jwks_url or jwks_file (Firebase: the project id).") { $0.audience = $1 },
        text("issuer", "Tokens must carry this iss. Required with jwks_url or jwks_file (Firebase: https://securetoken.google.com/<project id>).") {
            $0.issuer = $1
        },
        text("backend_key", "Bearer key of the donations API, 32 bytes or more. Required.") { $0.backendKey = $1 },
        integer("watch_token_ttl_seconds", "Seconds a donor's watch link lives unless its donation ends first (default 86400).", 60...2_592_000) {
            $0.watchTokenTTLSeconds = $1
        },
        integer("heartbeat_seconds", "Seconds between WebSocket pings (default 30).", 1...3600) { $0.heartbeatSeconds = $1 },
        integer("publish_interval_seconds", "Volunteers' publish cadence; silent for 3 of these means offline (default 20).", 1...3600) {
            $0.publishIntervalSeconds = $1
        },
        integer("history_size", "Kept positions per channel for since recovery (default 32).", 1...10_000) { $0.historySize = $1 },
        number("arrival_radius_meters", "Distance from the destination that counts as arrived (default 150).", 1...100_000) {
            $0.arrivalRadiusMeters = $1
        },
        number("publish_rate", "Positions per second per volunteer (default 1).", 0.001...100_000) { $0.publishRate = $1 },
        integer("publish_burst", "Positions a volunteer may send in a burst (default 5).", 1...1_000_000) { $0.publishBurst = $1 },
        integer("max_frame_bytes", "Largest client WebSocket frame (default 4096).", 256...1_048_576) { $0.maxFrameBytes = $1 },
        integer("max_body_bytes", "Largest HTTP request body (default 65536).", 1024...16_777_216) { $0.maxBodyBytes = $1 },
        integer("outbox_bytes", "Outbound queue per connection before conflation and 4008 (default 262144).", 4096...67_108_864) {
            $0.outboxBytes = $1
        },
        integer("slow_consumer_seconds", "Seconds a connection's queue may wait on its socket before 4008 (default 10).", 1...3600) {
            $0.slowConsumerSeconds = $1
        },
        integer("max_connections_per_identity", "Open WebSockets per identity (default 4).", 1...100_000) {
            $0.maxConnectionsPerIdentity = $1
        },
        integer("max_invalid_frames_per_minute", "Invalid frames a connection may send per minute before 4009 (default 10).", 1...100_000) {
            $0.maxInvalidFramesPerMinute = $1
        },
        integer("window_tolerance_ms", "Milliseconds a fix may predate its donation's trackable window, for phone clocks behind (default 2000).", 0...10_000) {
            $0.windowToleranceMilliseconds = $1
        },
        integer("max_position_age_seconds", "Seconds after which a fix is kept for nobody, even inside the window (default 600).", 1...86_400) {
            $0.maxPositionAgeSeconds = $1
        },
        integer("handshake_timeout_seconds", "Seconds a new connection may take to send its first request (default 10).", 1...3600) {
            $0.handshakeTimeoutSeconds = $1
        },
        integer("max_subscriptions_per_connection", "Subscriptions per connection (default 16).", 1...10_000) {
            $0.maxSubscriptionsPerConnection = $1
        },
        integer("shutdown_grace_seconds", "Seconds SIGTERM waits for sockets to close (default 10).", 0...3600) {
            $0.shutdownGraceSeconds = $1
        },
        text("tls_cert", "PEM certificate chain; with tls_key, serve https:// and wss:// only.") { $0.tlsCert = $1 },
        text("tls_key", "PEM private key for tls_cert.") { $0.tlsKey = $1 },
        choice("log_level", "trace, debug, info, notice, warning, error or critical (default info).",
               ["trace", "debug", "info", "notice", "warning", "error", "critical"]) { $0.logLevel = $1 },
        choice("log_format", "text, or json for one JSON object per line (default text).", ["text", "json"]) { $0.logFormat = $1 },
    ] + MapSettings.keys

    static func named(_ name: String) -> ConfigurationKey? { all.first { $0.name == name } }

    private static func text(_ name: String, _ summary: String, _ set: @escaping @Sendable (inout BrokerConfiguration, String) -> Void) -> Self {
        Self(name: name, summary: summary) { configuration, value in
            guard !value.isEmpty else { return "must not be empty" }
            set(&configuration, value)
            return nil
        }
    }

    private static func boolean(_ name: String, _ summary: String, _ set: @escaping @Sendable (inout BrokerConfiguration, Bool) -> Void) -> Self {
        Self(name: name, summary: summary) { configuration, value in
            switch value.lowercased() {
            case "true": set(&configuration, true)
            case "false": set(&configuration, false)
            default: return "must be true or false, not '\(value)'"
            }
            return nil
        }
    }

    private static func integer(
        _ name: String, _ summary: String, _ range: ClosedRange<Int>, _ set: @escaping @Sendable (inout BrokerConfiguration, Int) -> Void
    ) -> Self {
        Self(name: name, summary: summary) { configuration, value in
            guard let number = Int(value), range.contains(number) else {
                return "must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(value)'"
            }
            set(&configuration, number)
            return nil
        }
    }

    private static func number(
        _ name: String, _ summary: String, _ range: ClosedRange<Double>, _ set: @escaping @Sendable (inout BrokerConfiguration, Double) -> Void
    ) -> Self {
        Self(name: name, summary: summary) { configuration, value in
            guard let number = Double(value), number.isFinite, range.contains(number) else {
                return "must be a number from \(range.lowerBound) to \(range.upperBound), not '\(value)'"
            }
            set(&configuration, number)
            return nil
        }
    }

    private static func choice(
        _ name: String, _ summary: String, _ choices: [String], _ set: @escaping @Sendable (inout BrokerConfiguration, String) -> Void
    ) -> Self {
        Self(name: name, summary: summary) { configuration, value in
            guard choices.contains(value.lowercased()) else { return "must be one of \(choices.joined(separator: ", ")), not '\(value)'" }
            set(&configuration, value.lowercased())
            return nil
        }
    }
}
