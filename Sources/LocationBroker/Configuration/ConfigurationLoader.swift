import BrokerCore
import Foundation
import Yams

/// Builds a ``BrokerConfiguration`` from its layers: defaults, YAML file, environment, flags (last wins).
///
/// Not apple/swift-configuration: its readers look up only the keys asked for, so an unknown key in the file or
/// the environment would pass unnoticed, and its non-throwing getters fall back to the default when a value does
/// not convert; ranges, messages naming the source and `check-config`'s report would still be written here.
enum ConfigurationLoader {
    /// The file read when `--config` is not given, if it exists.
    static let defaultFile = "config/broker.yaml"

    /// - Parameters:
    ///   - file: the YAML file named by `--config`; when `nil`, ``defaultFile`` is read if it exists.
    ///   - environment: the process environment; only `LOCATION_BROKER_*` variables are read.
    ///   - flags: settings given on the command line, by file key.
    ///   - forServing: whether the backend key is needed too (`location-broker token` needs only the JWT settings).
    ///   - validating: whether the settings are checked as a whole (`location-broker backup` reads only where the
    ///     data is, and needs no secret).
    static func load(
        file: String?, environment: [String: String], flags: [(key: String, value: String)], forServing: Bool = true,
        validating: Bool = true
    ) throws -> BrokerConfiguration {
        try loadWithSources(file: file, environment: environment, flags: flags, forServing: forServing, validating: validating).configuration
    }

    /// ``load(file:environment:flags:forServing:)``, also saying where each setting that is not a default came
    /// from: `file PATH`, `environment VARIABLE` or `command line` (for `check-config`).
    static func loadWithSources(
        file: String?, environment: [String: String], flags: [(key: String, value: String)], forServing: Bool = true,
        validating: Bool = true
    ) throws -> (configuration: BrokerConfiguration, sources: [String: String]) {
        var configuration = BrokerConfiguration()
        var sources: [String: String] = [:]
        let path = file ?? (FileManager.default.fileExists(atPath: defaultFile) ? defaultFile : nil)
        if let path {
            for (key, value) in try readYAML(path) {
                try apply(key, value, to: &configuration, from: "\(path)")
                sources[key] = "file \(path)"
            }
        }
        let known = Set(ConfigurationKey.all.map(\.environmentVariable))
        for name in environment.keys.sorted() where name.hasPrefix("LOCATION_BROKER_") && !known.contains(name) {
            throw ConfigurationError(description: "unknown environment variable \(name); see docs/CONFIGURATION.md for the list")
        }
        for key in ConfigurationKey.all {
            if let value = environment[key.environmentVariable] {
                try apply(key.name, value, to: &configuration, from: "environment variable \(key.environmentVariable)")
                sources[key.name] = "environment \(key.environmentVariable)"
            }
        }
        for (key, value) in flags {
            try apply(key, value, to: &configuration, from: "command line")
            sources[key] = "command line"
        }
        try readStorePassword(into: &configuration)
        if validating { try validate(configuration, forServing: forServing) }
        return (configuration, sources)
    }

    /// Takes the store's password from `store_password_file`, refusing a second password in the URL. The
    /// file's content never appears in an error.
    static func readStorePassword(into configuration: inout BrokerConfiguration) throws {
        guard let path = configuration.storePasswordFile else { return }
        guard var store = configuration.store else {
            throw ConfigurationError(description: "store_password_file is set but store is not: it holds the password of store's PostgreSQL user")
        }
        guard store.password == nil else {
            throw ConfigurationError(description: "store names a password and store_password_file is set too: keep the password in one place")
        }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(description: "cannot read store_password_file \(path): \(error.localizedDescription)")
        }
        // Editors and `echo` end the file with a newline that is not part of the password.
        var password = text
        while password.last?.isNewline == true { password.removeLast() }
        guard !password.isEmpty else { throw ConfigurationError(description: "store_password_file \(path) is empty") }
        store.password = password
        configuration.store = store
    }

    private static func apply(_ name: String, _ value: String, to configuration: inout BrokerConfiguration, from source: String) throws {
        guard let key = ConfigurationKey.named(name) else {
            throw ConfigurationError(description: "unknown setting '\(name)' in \(source); see docs/CONFIGURATION.md for the list")
        }
        if let problem = key.apply(&configuration, value) {
            throw ConfigurationError(description: "\(name) \(problem) (from \(source))")
        }
    }

    /// Reads a flat YAML mapping of setting names to scalars; `null` values are skipped.
    static func readYAML(_ path: String) throws -> [(String, String)] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(description: "cannot read the configuration file \(path): \(error.localizedDescription)")
        }
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            throw ConfigurationError(description: "the configuration file \(path) is not valid YAML: \(error)")
        }
        guard let node else { return [] }
        guard let mapping = node.mapping else {
            throw ConfigurationError(description: "the configuration file \(path) must be a mapping of setting: value")
        }
        var pairs: [(String, String)] = []
        for (key, value) in mapping {
            guard let name = key.string else { throw ConfigurationError(description: "\(path): setting names must be text") }
            guard let scalar = value.scalar else {
                throw ConfigurationError(description: "\(path): \(name) must be a single value, not a list or mapping")
            }
            if value.null != nil { continue }
            pairs.append((name, scalar.string))
        }
        return pairs
    }

    /// A JWKS is trusted only for the tokens of one audience and one issuer: the keys of an identity provider
    /// such as Firebase sign the tokens of every project it serves.
    private static func validateJWKS(_ configuration: BrokerConfiguration) throws {
        guard configuration.jwksFile != nil || configuration.jwksURL != nil else { return }
        let setting = configuration.jwksURL != nil ? "jwks_url" : "jwks_file"
        if configuration.jwksFile != nil && configuration.jwksURL != nil {
            throw ConfigurationError(description: "jwks_url and jwks_file are both set; set one of them")
        }
        let missing = [configuration.audience == nil ? "audience" : nil, configuration.issuer == nil ? "issuer" : nil].compactMap { $0 }
        guard missing.isEmpty else {
            throw ConfigurationError(
                description: "\(setting) needs \(missing.joined(separator: " and ")) to be set: an identity provider's keys sign the tokens of every project it serves (Firebase's sign those of every Firebase project), so without them a token from anybody's project would be accepted. Firebase: audience: <project id>, issuer: https://securetoken.google.com/<project id>."
            )
        }
    }

    /// Refuses settings the broker cannot run with, saying what to do.
    static func validate(_ configuration: BrokerConfiguration, forServing: Bool = true) throws {
        try configuration.map.validate()
        let minimum = BrokerConfiguration.minimumSecretBytes
        if let secret = configuration.jwtSecret, secret.utf8.count < minimum {
            throw ConfigurationError(
                description: "jwt_secret is \(secret.utf8.count) bytes; it must be at least \(minimum). Set LOCATION_BROKER_JWT_SECRET to a long random string (for example: openssl rand -hex 32)."
            )
        }
        if configuration.jwtSecret == nil && configuration.jwksFile == nil && configuration.jwksURL == nil {
            throw ConfigurationError(
                description: "no way to verify client tokens: set LOCATION_BROKER_JWT_SECRET (at least \(minimum) bytes, for example: openssl rand -hex 32), jwks_url or jwks_file. The broker has no built-in secret."
            )
        }
        try validateJWKS(configuration)
        guard forServing else { return }
        if (configuration.tlsCert == nil) != (configuration.tlsKey == nil) {
            throw ConfigurationError(description: "tls_cert and tls_key go together: set both to serve TLS, or neither")
        }
        guard let key = configuration.backendKey else {
            throw ConfigurationError(
                description: "no backend key: set LOCATION_BROKER_BACKEND_KEY (at least \(minimum) bytes, for example: openssl rand -hex 32). The broker has no built-in key."
            )
        }
        if key.utf8.count < minimum {
            throw ConfigurationError(description: "backend_key is \(key.utf8.count) bytes; it must be at least \(minimum).")
        }
        if key == configuration.jwtSecret {
            throw ConfigurationError(description: "backend_key and jwt_secret must differ: whoever holds the JWT secret could otherwise change donations.")
        }
        try validateCluster(configuration)
        try validateEvents(configuration)
    }

    /// Webhooks need their secrets; a cluster's nodes must push with one VAPID key.
    private static func validateEvents(_ configuration: BrokerConfiguration) throws {
        if configuration.webhookURL != nil, configuration.webhookSecrets == nil {
            throw ConfigurationError(
                description: "webhook_url needs webhook_secrets: set LOCATION_BROKER_WEBHOOK_SECRETS to a whsec_ secret shared with the receiver (for example: echo \"whsec_$(openssl rand -base64 32)\").")
        }
        if configuration.webhookSecrets != nil, configuration.webhookURL == nil {
            throw ConfigurationError(description: "webhook_secrets is set but webhook_url is not: set both to send webhooks, or neither.")
        }
        if configuration.pushSubject != nil, configuration.store != nil, configuration.vapidPrivateKeyFile == nil {
            throw ConfigurationError(
                description: "push_subject on a cluster needs vapid_private_key_file: every node must sign pushes with the same key (make one with: openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out vapid-private.pem).")
        }
    }

    /// A PostgreSQL store needs cluster secrets: without them anyone who can connect to the database would read
    /// every position on the bus and could forge events.
    private static func validateCluster(_ configuration: BrokerConfiguration) throws {
        let minimum = BrokerConfiguration.minimumSecretBytes
        guard configuration.store != nil else { return }
        guard let secrets = configuration.clusterSecrets, !secrets.isEmpty else {
            throw ConfigurationError(
                description: "a PostgreSQL store needs cluster_secret: set LOCATION_BROKER_CLUSTER_SECRET to the same long random string on every node (for example: openssl rand -hex 32). It seals the positions and events the nodes exchange through the database."
            )
        }
        for (index, secret) in secrets.enumerated() {
            if secret.utf8.count < minimum {
                throw ConfigurationError(
                    description: "cluster_secret number \(index + 1) is \(secret.utf8.count) bytes; each must be at least \(minimum) (for example: openssl rand -hex 32).")
            }
            if secret == configuration.jwtSecret || secret == configuration.backendKey {
                throw ConfigurationError(description: "cluster_secret must differ from jwt_secret and backend_key: each opens something else.")
            }
        }
    }
}
