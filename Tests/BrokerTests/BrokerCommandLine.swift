import Foundation

/// Runs the built `location-broker` once, to its end, for the tests of its command line (settings, check-config,
/// help). The environment holds no `LOCATION_BROKER_*` variable but those given.
enum BrokerCommandLine {
    struct Outcome {
        let status: Int32
        /// Standard output and standard error, interleaved.
        let output: String
    }

    /// The command did not end within its deadline (it was killed): a command that should print and exit served.
    struct TimedOut: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `location-broker ARGUMENTS`; kills it and throws ``TimedOut`` if it has not ended within `seconds`.
    static func run(_ arguments: [String], environment: [String: String] = [:], seconds: Double = 30) throws -> Outcome {
        let process = Process()
        process.executableURL = try BrokerProcess.executable()
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LOCATION_BROKER_") }.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // Reading to the end returns when the process exits (it closes the pipe), or when the deadline kills it.
        // SIGKILL, not SIGTERM: the broker ends gracefully on SIGTERM, which would look like an ordinary exit.
        let pid = process.processIdentifier
        let deadline = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: deadline)
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        deadline.cancel()
        if process.terminationReason == .uncaughtSignal {
            throw TimedOut(description: "location-broker \(arguments.joined(separator: " ")) did not end within \(seconds) s")
        }
        return Outcome(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self))
    }
}
