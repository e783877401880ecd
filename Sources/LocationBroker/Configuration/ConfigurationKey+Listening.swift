import BrokerPostgres
import Foundation

// Where the broker listens, where it keeps donations, and how it joins a cluster; then TLS and logs.
extension ConfigurationKey {
    static let listening: [ConfigurationKey] = [
        text("host", \.host, "Address to listen on; 0.0.0.0 for every interface."),
        integer("port", \.port, 0...65535, "TCP port for HTTP and WebSocket; 0 picks a free one."),
        text("database", \.database, "SQLite file for donations, created with its folder on first start; unused with store."),
        parsed(
            "store", \.store,
            allowed: "`postgres://user[:password]@host[:port]/database[?sslmode=disable\\|prefer\\|require][&host=/socket/folder]` (`postgresql://` too)",
            unset: "none (SQLite, one node)", example: "postgres://broker@db.internal/location_broker?sslmode=require",
            "PostgreSQL shared by several nodes, for donations and the messages between nodes; unset: the SQLite database.",
            show: \.description  // never the password
        ) { text in
            Result { try PostgresLocation(text) }.mapError { Refusal("\($0)") }
        },
        text(
            "store_password_file", \.storePasswordFile, allowed: "path of a readable file",
            example: "/etc/location-broker/store-password", "File holding the password of store's PostgreSQL user, instead of one in the URL."),
        clusterSecret,
        integer(
            "cluster_heartbeat_seconds", \.clusterHeartbeatSeconds, 1...60,
            "With store: seconds between the listener's sealed round trips, and how long one may take; a bus write not answered within twice this is sent again on a new session."),
        text(
            "node_id", \.nodeID, unset: "host name and process id", example: "node-1",
            "This node's name in a cluster, unique per running node."),
    ]

    static let transport: [ConfigurationKey] = [
        text("tls_cert", \.tlsCert, allowed: "a readable PEM file", example: "/etc/location-broker/cert.pem",
             "PEM certificate chain; with tls_key, serve https:// and wss:// only."),
        text("tls_key", \.tlsKey, allowed: "a readable PEM file", example: "/etc/location-broker/key.pem", "PEM private key of tls_cert."),
        choice("log_level", \.logLevel, ["trace", "debug", "info", "notice", "warning", "error", "critical"], "Lowest level of log messages written."),
        choice("log_format", \.logFormat, ["text", "json"], "text, or json for one JSON object per line (for log shippers)."),
    ]

    /// One or more secrets separated by commas: the first seals, every one opens (rotation).
    private static let clusterSecret = Self(
        name: "cluster_secret",
        summary: "With store: secrets sealing the cluster's bus and stored positions, comma-separated; the first seals, all open.",
        allowed: "with `store`: one or more secrets separated by commas, each at least 32 bytes, none equal to `jwt_secret` or `backend_key`",
        whenUnset: "none", isSecret: true, example: nil,
        apply: { configuration, value in
            guard !value.isEmpty else { return "must not be empty" }
            configuration.clusterSecrets = value.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            return nil
        },
        value: { $0.clusterSecrets.map(masked) }
    )
}
