import BrokerAuth
import BrokerCore
import BrokerServer
import EventDelivery
import Foundation
import Logging
import NIOSSL
import TrackingPage

/// What `serve` checks of the files, keys and key sets its settings name before it opens the store or binds, and
/// `check-config` runs too, so that check-config passes exactly what serve accepts. Each refusal is a
/// ``ConfigurationError`` naming the setting's file and what is wrong with it.
enum StartupChecks {
    /// Runs every check; returns the JWKS read once (serve keeps it, so the key set is not fetched twice).
    static func run(
        _ configuration: BrokerConfiguration, onJWKSRefresh: @escaping @Sendable (Bool, Int) -> Void = { _, _ in },
        logger: Logger
    ) async throws -> JWKSRefresher? {
        try tlsPair(configuration)
        try mapTiles(configuration, logger: logger)
        try vapidKey(configuration)
        try webhookSecrets(configuration)
        return try await jwks(configuration, onRefresh: onJWKSRefresh, logger: logger)
    }

    /// The certificate and key are readable PEM and make a pair (the server's TLS context accepts them).
    private static func tlsPair(_ configuration: BrokerConfiguration) throws {
        guard let tls = try TLSFiles.serverConfiguration(certificate: configuration.tlsCert, key: configuration.tlsKey) else { return }
        do {
            _ = try NIOSSLContext(configuration: tls)
        } catch {
            throw ConfigurationError(
                description: "the TLS certificate \(configuration.tlsCert ?? "") and key \(configuration.tlsKey ?? "") cannot serve TLS together (is the key the certificate's?): \(error)")
        }
    }

    /// The map as the tracking page serves it: its settings, Leaflet's folder, and map_tiles_file opened as MBTiles.
    private static func mapTiles(_ configuration: BrokerConfiguration, logger: Logger) throws {
        do {
            // Silent: a missing Leaflet is a warning, not a refusal, and serve's own map logs it once.
            let silent = Logger(label: logger.label, factory: { _ in SwiftLogNoOpLogHandler() })
            _ = try TrackingMap(configuration.map, countRefusal: { _ in }, logger: silent)
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(description: "cannot open map_tiles_file \(configuration.map.tilesFile ?? ""): \(error)")
        }
    }

    /// With Web Push on, the VAPID key file is a valid key, or, absent, can be created where it is named.
    private static func vapidKey(_ configuration: BrokerConfiguration) throws {
        guard configuration.pushSubject != nil else { return }
        let path = configuration.vapidKeyPath
        if FileManager.default.fileExists(atPath: path) {
            do {
                _ = try VAPIDKey.load(pemFile: path)
            } catch {
                throw ConfigurationError(description: "vapid_private_key_file: \(error)")
            }
            return
        }
        var folder = (path as NSString).deletingLastPathComponent
        if folder.isEmpty { folder = "." }
        while !FileManager.default.fileExists(atPath: folder) && folder != "/" {
            folder = (folder as NSString).deletingLastPathComponent
            if folder.isEmpty { folder = "." }
        }
        guard access(folder, W_OK | X_OK) == 0 else {
            throw ConfigurationError(
                description: "vapid_private_key_file \(path) does not exist and cannot be created: \(folder) is not writable by this user")
        }
    }

    /// The webhook secrets make a signer.
    private static func webhookSecrets(_ configuration: BrokerConfiguration) throws {
        guard configuration.webhookURL != nil, let secrets = configuration.webhookSecrets else { return }
        do {
            _ = try WebhookSigner(secrets: secrets.map { try WebhookSecret($0) })
        } catch {
            throw ConfigurationError(description: "webhook_secrets: \(error)")
        }
    }

    /// The JWKS (jwks_url or jwks_file) is read once and holds usable keys.
    private static func jwks(
        _ configuration: BrokerConfiguration, onRefresh: @escaping @Sendable (Bool, Int) -> Void, logger: Logger
    ) async throws -> JWKSRefresher? {
        guard let source = JWKSSource(configuration) else { return nil }
        do {
            return try await JWKSRefresher.load(source: source, timing: configuration.jwksTiming, onRefresh: onRefresh, logger: logger)
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(description: "cannot read the JWKS \(source): \(error)")
        }
    }
}
