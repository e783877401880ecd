import Foundation

@testable import BrokerTestSupport

/// Runs the built `location-broker` once, to its end, for the tests of its command line (settings, check-config,
/// help). The environment holds no `LOCATION_BROKER_*` variable but those given.
enum BrokerCommandLine {
    struct Outcome {
        let status: Int32
        /// Standard output and standard error, interleaved.
        let output: String
    }

    /// Runs `location-broker ARGUMENTS`; kills it (SIGKILL: the broker ends gracefully on SIGTERM, which would
    /// look like an ordinary exit) and throws ``ChildProcess/TimedOut`` if it has not ended within `seconds`.
    static func run(_ arguments: [String], environment: [String: String] = [:], seconds: Int64 = 30) async throws -> Outcome {
        let executable = try await BrokerProcess.executable().path
        let merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LOCATION_BROKER_") }.merging(environment) { $1 }
        let (status, output) = try await ChildProcess.run(executable, arguments, environment: merged, timeout: .seconds(seconds))
        return Outcome(status: status, output: output)
    }
}
