#if DEBUG
import Foundation
import NIOConcurrencyHelpers
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The real `location-broker` executable in a process of its own, for what only a process can show:
/// `kill -9`, SIGTERM, exit codes, several nodes of a cluster.
///
/// A process that is still running when its `BrokerProcess` goes away (the test ended, passed or not) is killed,
/// so no test leaves a broker behind; ``stop()`` ends it as an operator would.
final class BrokerProcess: Sendable {
    let process: Process
    let port: Int
    let database: String
    /// What the broker wrote until it listened.
    let startupOutput: String
    /// Everything the broker wrote so far.
    var output: String { log.withLock { $0 } }
    private let log: OutputLog

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A built executable of this package, building it first (within ten minutes) if this test run did not.
    static func executable(_ product: String = "location-broker") async throws -> URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(product)
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        let build = try await ChildProcess.run(
            "/usr/bin/env", ["swift", "build", "--package-path", packageRoot.path, "--product", product], timeout: .seconds(600))
        let built = packageRoot.appendingPathComponent(".build/debug/\(product)")
        guard build.status == 0, FileManager.default.isExecutableFile(atPath: built.path) else {
            throw BrokerProcessError("could not build \(product): \(build.output)")
        }
        return built
    }

    private init(process: Process, port: Int, database: String, startupOutput: String, log: OutputLog) {
        self.process = process
        self.log = log
        self.port = port
        self.database = database
        self.startupOutput = startupOutput
    }

    /// Starts the broker on a free port with the test secrets, and waits (30 s at most) until it listens.
    static func start(database: String, extraEnvironment: [String: String] = [:]) async throws -> BrokerProcess {
        let process = Process()
        process.executableURL = try await executable()
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
        // The logs are read as they come (never by a blocking read here), and kept draining so that a full pipe
        // cannot block the broker.
        let output = Pipe()
        let seen = OutputLog()
        output.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            if chunk.isEmpty { handle.readabilityHandler = nil }
            seen.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
        }
        process.standardOutput = output
        process.standardError = output
        try process.run()
        var port: Int?
        do {
            try await waitUntil("the broker process listens", deadline: .now + .seconds(30)) {
                let text = seen.withLock { $0 }
                // `address=127.0.0.1:PORT` in text logs, `"address":"127.0.0.1:PORT"` in JSON logs.
                if let range = text.range(of: #"address(=|":")127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                    port = Int(text[range].split(separator: ":").last ?? "")
                    return true
                }
                guard process.isRunning else { throw BrokerProcessError("the broker exited before listening: \(text)") }
                return false
            }
        } catch {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            throw error
        }
        return BrokerProcess(process: process, port: port ?? 0, database: database, startupOutput: seen.withLock { $0 }, log: seen)
    }

    /// Sends a signal (SIGKILL, SIGTERM...).
    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the process to exit, at most `timeout`; returns its status, or `nil` if it is still running.
    func waitForExit(timeout: Duration) async -> Int32? {
        try? await waitUntil("the broker process exited", deadline: .now + timeout, poll: .milliseconds(20)) { !process.isRunning }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// Stops the broker as an operator would (SIGTERM), and kills it if it has not exited within 15 s.
    func stop() async {
        guard process.isRunning else { return }
        signal(SIGTERM)
        if await waitForExit(timeout: .seconds(15)) == nil { signal(SIGKILL) }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

extension XCTestCase {
    /// Starts a broker process that is stopped when this test ends, whether it passed, failed or threw.
    func startBrokerProcess(database: String, extraEnvironment: [String: String] = [:]) async throws -> BrokerProcess {
        let broker = try await BrokerProcess.start(database: database, extraEnvironment: extraEnvironment)
        addTeardownBlock { await broker.stop() }
        return broker
    }

    /// Terminates `process` when this test ends, if it still runs (a `tracker-watch` the test started, say).
    func terminateAtTeardown(_ process: Process) {
        addTeardownBlock { if process.isRunning { process.terminate() } }
    }
}

/// What a process wrote so far, appended to by the pipe's handler.
private final class OutputLog: Sendable {
    private let text = NIOLockedValueBox("")

    func withLock<T: Sendable>(_ body: (inout String) -> T) -> T { text.withLockedValue { body(&$0) } }
}

struct BrokerProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
#endif
