import ArgumentParser
import BrokerAuth
import BrokerCore
import BrokerStorage
import Foundation
import JSONLogging
import Logging

/// `location-broker`: serve (the default), check the configuration, back up the database, or mint a token to try the broker.
public struct LocationBrokerCommand: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "location-broker",
        abstract: "A real-time location broker: donors watch, live and privately, the volunteer carrying their donation.",
        version: BrokerRelease.description,
        subcommands: [ServeCommand.self, CheckConfigCommand.self, BackupCommand.self, TokenCommand.self, SettingsCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}

struct ServeCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the broker (the default command).",
        discussion: """
            Settings come from defaults, then the YAML file, then LOCATION_BROKER_* environment variables, then \
            these flags. Secrets (LOCATION_BROKER_JWT_SECRET, LOCATION_BROKER_BACKEND_KEY) have no default: the \
            broker refuses to start without them. Every setting, as its flag:

            \(SettingsDocument.help)
            """
    )

    @OptionGroup var options: ServeOptions

    package func run() async throws {
        let configuration: BrokerConfiguration
        do {
            configuration = try ConfigurationLoader.load(
                file: options.config, environment: ProcessInfo.processInfo.environment, flags: try options.flags())
        } catch let error as ConfigurationError {
            throw StartupError(description: error.description)
        }
        if configuration.logFormat == "json" {
            LoggingSystem.bootstrap { label in JSONLogHandler(label: label) }
        }
        var logger = Logger(label: "location-broker")
        logger.logLevel = Logger.Level(rawValue: configuration.logLevel) ?? .info
        let announcer = logger
        let broker: Broker
        do {
            broker = try await Broker.build(configuration: configuration, logger: logger) { port in
                announcer.notice("listening", metadata: ["address": "\(configuration.host):\(port)"])
            }
        } catch let error as ConfigurationError {
            throw StartupError(description: error.description)
        } catch {
            throw StartupError(description: "cannot open the store \(configuration.storeDescription): \(error)")
        }
        try await broker.run()
    }
}

struct TokenCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print an HS256 token for an identity, signed with LOCATION_BROKER_JWT_SECRET, to try the broker."
    )

    @Option(help: "The identity (e-mail) the token names.")
    var identity: String

    @Option(help: "Lifetime in seconds.")
    var ttl: Int64 = 3600

    @Option(help: "The claim that carries the identity (default: the broker's identity_claim, usually sub).")
    var claim: String?

    @Option(help: "YAML configuration file (default: config/broker.yaml when it exists).")
    var config: String?

    package func run() async throws {
        let configuration: BrokerConfiguration
        do {
            // The same layers as the server, so the token matches what the server will check.
            configuration = try ConfigurationLoader.load(
                file: config, environment: ProcessInfo.processInfo.environment, flags: [], forServing: false)
        } catch let error as ConfigurationError {
            throw StartupError(description: error.description)
        }
        guard let secret = configuration.jwtSecret else {
            throw StartupError(description: "the broker verifies tokens with a JWKS only (jwks_url or jwks_file); mint tokens with your identity provider")
        }
        guard ttl > 0 else { throw ValidationError("--ttl must be a positive number of seconds") }
        print(
            try await TokenVerifier.mintHS256(
                secret: secret, identity: identity, claim: claim ?? configuration.identityClaim, ttlSeconds: ttl,
                audience: configuration.audience, issuer: configuration.issuer))
    }
}

/// `location-broker check-config`: the configuration exactly as `serve` reads it.
struct CheckConfigCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Read the configuration as serve does, print every effective setting with its source (secrets masked), run serve's checks of the files and keys it names (TLS pair, map tiles, VAPID key, webhook secrets, JWKS), and exit non-zero with serve's refusal if it has one."
    )

    @OptionGroup var options: ServeOptions

    package func run() async throws {
        do {
            let (configuration, sources) = try ConfigurationLoader.loadWithSources(
                file: options.config, environment: ProcessInfo.processInfo.environment, flags: try options.flags())
            print(ConfigurationReport(configuration, sources: sources).text, terminator: "")
            // The files, keys and key sets serve checks before it binds, by the same code; nothing is logged.
            _ = try await StartupChecks.run(configuration, logger: Logger(label: "check-config", factory: { _ in SwiftLogNoOpLogHandler() }))
        } catch let error as ConfigurationError {
            throw StartupError(description: error.description)
        }
    }
}

/// A reason the broker cannot start, printed as it is (without the usage text).
struct StartupError: Error, CustomStringConvertible {
    package let description: String
}
