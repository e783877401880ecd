import Foundation

/// Runs the built `location-broker` once, to its end, for the tests of its command line (settings, check-config,
/// help). The environment holds no `LOCATION_BROKER_*` variable but those given.
enum BrokerCommandLine {
    struct Outcome {
        let status: Int32
        /// Standard output and standard error, interleaved.
        let output: String
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Outcome {
        let process = Process()
        process.executableURL = try BrokerProcess.executable()
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LOCATION_BROKER_") }.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // Reading to the end returns when the process exits (it closes the pipe); these commands do not serve.
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self))
    }
}
