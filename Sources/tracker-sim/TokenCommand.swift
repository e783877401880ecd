import ArgumentParser
import FleetSimulation
import Foundation

/// `tracker-sim token`: a client token signed with the shared secret, for trying things out.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print an HS256 client token for an identity, signed with the broker's JWT secret."
    )

    @Option(help: "The identity (e-mail) the token names, in its sub claim.")
    var identity: String

    @Option(help: "How long the token lives (such as 10m or 1h).")
    var ttl = "1h"

    @Option(help: "The JWT secret (default: $LOCATION_BROKER_JWT_SECRET).")
    var jwtSecret: String?

    func run() async throws {
        guard let secret = jwtSecret ?? ProcessInfo.processInfo.environment["LOCATION_BROKER_JWT_SECRET"], !secret.isEmpty else {
            throw ValidationError("no JWT secret: pass --jwt-secret or set LOCATION_BROKER_JWT_SECRET (see .secrets/broker.env)")
        }
        let lifetime = try seconds(ttl, option: "--ttl")
        guard lifetime >= 1 else { throw ValidationError("--ttl must be at least one second") }
        do {
            print(try await TokenMinter(secret: secret).token(identity: identity, ttlSeconds: Int64(lifetime)))
        } catch let error as SimulationError {
            throw ValidationError(error.description)
        }
    }
}
