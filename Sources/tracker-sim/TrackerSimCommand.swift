import ArgumentParser

/// `tracker-sim`: simulated fleets to try the broker without phones, and the load benchmark.
@main
struct TrackerSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tracker-sim",
        abstract: "Simulated volunteers and donors for location-broker: a live fleet to watch, and load benchmarks.",
        discussion: """
            Speaks only the public wire protocol (docs/PROTOCOL.md) and the backend API, like any other client. \
            Secrets default to the broker's own environment variables, LOCATION_BROKER_JWT_SECRET and \
            LOCATION_BROKER_BACKEND_KEY (scripts/run-broker keeps them in .secrets/broker.env).
            """,
        subcommands: [FleetCommand.self, BenchCommand.self, BenchCompareCommand.self, TokenCommand.self, WorkerSubcommand.self]
    )
}
