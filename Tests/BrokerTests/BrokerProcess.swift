import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The real `location-broker` executable in a process of its own, for what only a process can show:
/// `kill -9`, SIGTERM, exit codes.
final class BrokerProcess {
    let process = Process()
    let port: Int
    let database: String
    private let output: Pipe
    /// What the broker wrote until it listened.
    let startupOutput: String

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A built executable of this package, building it first if this test run did not.
    static func executable(_ product: String = "location-broker") throws -> URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(product)
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        let build = Process()
        build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        build.arguments = ["swift", "build", "--product", product]
        build.currentDirectoryURL = packageRoot
        try build.run()
        build.waitUntilExit()
        let built = packageRoot.appendingPathComponent(".build/debug/\(product)")
        guard build.terminationStatus == 0, FileManager.default.isExecutableFile(atPath: built.path) else {
            throw BrokerProcessError("could not build \(product)")
        }
        return built
    }

    /// Starts the broker on a free port with the test secrets, and waits until it listens.
    init(database: String, extraEnvironment: [String: String] = [:]) throws {
        self.database = database
        process.executableURL = try Self.executable()
        // An empty configuration file, so that config/broker.yaml of the working folder plays no part.
        let config = URL(fileURLWithPath: database).deletingLastPathComponent().appendingPathComponent("broker.yaml")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("# test broker: defaults only\n".utf8).write(to: config)
        process.arguments = ["--port", "0", "--database", database, "--config", config.path]
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LOCATION_BROKER_") }
        environment["LOCATION_BROKER_JWT_SECRET"] = LiveBroker.jwtSecret
        environment["LOCATION_BROKER_BACKEND_KEY"] = LiveBroker.backendKey
        environment.merge(extraEnvironment) { $1 }
        process.environment = environment
        output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        var seen = ""
        while true {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw BrokerProcessError("the broker exited before listening: \(seen)") }
            seen += String(decoding: chunk, as: UTF8.self)
            // `address=127.0.0.1:PORT` in text logs, `"address":"127.0.0.1:PORT"` in JSON logs.
            if let range = seen.range(of: #"address(=|":")127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                port = Int(seen[range].split(separator: ":").last ?? "") ?? 0
                break
            }
        }
        startupOutput = seen
        // Keep draining the logs, or a full pipe would block the broker.
        output.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
    }

    /// Sends a signal (SIGKILL, SIGTERM...).
    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the process to exit, at most `timeout`; returns its status, or `nil` if it is still running.
    func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return process.isRunning ? nil : process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

struct BrokerProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
