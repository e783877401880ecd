import Foundation
import NIOSSL
import PostgresNIO

/// Where the cluster's PostgreSQL is, parsed from a `postgres://` URL as libpq users write it:
/// `postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require][&host=/socket/folder]`.
///
/// A `host` query parameter that starts with `/` names the folder of a Unix socket (as in libpq). TLS, when
/// used, always verifies the server's certificate against the system's trust store; `sslmode` defaults to
/// `disable` for a socket or a loopback host and to `require` otherwise.
package struct PostgresLocation: Sendable, Equatable {
    enum Endpoint: Sendable, Equatable {
        case tcp(host: String, port: Int)
        case socket(path: String)
    }

    enum TLSMode: String, Sendable, Equatable {
        case disable, prefer, require
    }

    let endpoint: Endpoint
    let username: String
    /// From the URL, or from `store_password_file` (see ``ConfigurationLoader``).
    package var password: String?
    let database: String
    let tls: TLSMode

    /// Parses `text`; the error says what is wrong in words, to follow "store " in a refusal.
    package init(_ text: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
            scheme == "postgres" || scheme == "postgresql"
        else {
            throw PostgresLocationError("must be a postgres://user@host/database URL, not '\(Self.redacted(text))'")
        }
        guard let user = components.user, !user.isEmpty else {
            throw PostgresLocationError("names no user (postgres://USER@host/database)")
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !database.isEmpty else {
            throw PostgresLocationError("names no database (postgres://user@host/DATABASE)")
        }
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        for name in query.keys where !["sslmode", "host"].contains(name) {
            throw PostgresLocationError("has an unknown parameter '\(name)'; known: sslmode, host")
        }
        let port = components.port ?? 5432
        if let folder = query["host"], folder.hasPrefix("/") {
            endpoint = .socket(path: "\(folder)/.s.PGSQL.\(port)")
        } else {
            guard let host = components.host, !host.isEmpty else {
                throw PostgresLocationError("names no host (postgres://user@HOST/database, or ?host=/socket/folder)")
            }
            endpoint = .tcp(host: host, port: port)
        }
        username = user.removingPercentEncoding ?? user
        password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database
        if let mode = query["sslmode"] {
            guard let parsed = TLSMode(rawValue: mode) else {
                throw PostgresLocationError("has sslmode=\(mode); it must be disable, prefer or require")
            }
            tls = parsed
        } else {
            switch endpoint {
            case .socket: tls = .disable
            case .tcp(let host, _): tls = ["localhost", "127.0.0.1", "::1"].contains(host) ? .disable : .require
            }
        }
    }

    /// The text with any password replaced, for logs and errors, whether or not it parses as a URL: whatever
    /// stands between `://` and the last `@` is shown only up to its first `:`.
    static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.range(of: "://").map { $0.upperBound } ?? text.startIndex
        guard start <= at else { return text }
        let credentials = text[start..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(text[at...])
    }

    /// Where the broker's logs say it stores donations.
    package var description: String {
        switch endpoint {
        case .tcp(let host, let port): "postgres://\(username)@\(host):\(port)/\(database)"
        case .socket(let path): "postgres://\(username)@\(path)/\(database)"
        }
    }

    /// The pool's configuration.
    func clientConfiguration() -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        switch endpoint {
        case .tcp(let host, let port):
            let clientTLS: PostgresClient.Configuration.TLS =
                switch tls {
                case .disable: .disable
                case .prefer: .prefer(.makeClientConfiguration())
                case .require: .require(.makeClientConfiguration())
                }
            configuration = .init(host: host, port: port, username: username, password: password, database: database, tls: clientTLS)
        case .socket(let path):
            configuration = .init(unixSocketPath: path, username: username, password: password, database: database)
        }
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.maximumConnections = 8
        return configuration
    }

    /// The configuration of a single connection (the bus's listener, the migrations).
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        switch endpoint {
        case .tcp(let host, let port):
            let connectionTLS: PostgresConnection.Configuration.TLS =
                switch tls {
                case .disable: .disable
                case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
                case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                }
            var configuration = PostgresConnection.Configuration(
                host: host, port: port, username: username, password: password, database: database, tls: connectionTLS)
            configuration.options.connectTimeout = .seconds(5)
            return configuration
        case .socket(let path):
            return .init(unixSocketPath: path, username: username, password: password, database: database)
        }
    }
}

struct PostgresLocationError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}

// Its password stays out of every way it is printed: `"\(value)"`, `String(reflecting:)`, `dump`, or a log's metadata.
extension PostgresLocation: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["location": description], displayStyle: .struct) }
}
