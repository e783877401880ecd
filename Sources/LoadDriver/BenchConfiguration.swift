import FleetSimulation
import Foundation

/// The settings of one `tracker-sim bench` run. Every size and time is bounded, and the target must be on
/// this machine (127.0.0.0/8): a benchmark never aims anywhere else.
public struct BenchConfiguration: Sendable {
    public var scenario: BenchScenario
    /// The server measured. The baseline needs no API, backend key or JWT secret (they may be empty).
    public var server = BenchServer.broker
    /// `ws://127.0.0.1:8080` (the `/v1/ws` path is added when missing; for the baseline, `/ws`, under which each
    /// connection adds its channel).
    public var webSocketURL: String
    public var apiURL: String
    public var backendKey: String
    public var jwtSecret: String
    /// Connections for `idle` and `connect`.
    public var connections = 1_000
    /// Volunteer/donor pairs for `pairs`.
    public var pairs = 100
    /// Total positions per second: all pairs together (`pairs`), or the one channel (`fanout`).
    public var rate = 1_000.0
    /// Watchers of the one channel (`fanout`).
    public var watchers = 1_000
    /// Positions published on the one channel (`fanout`).
    public var positions = 200
    /// Volunteer/donor pairs of the `fleet` scenario.
    public var volunteers = 1_000
    /// Seconds between a fleet volunteer's fixes (Ponte: 20).
    public var interval = 20.0
    /// Seconds of load (or of holding the connections, for `idle`).
    public var duration = 20.0
    /// Worker processes; 0 runs one worker inside this process.
    public var procs = 1
    /// Connections per source address (127.0.0.2, .3, ...).
    public var perAddress = 20_000
    /// Handshakes in flight at once per worker.
    public var concurrency = 64
    /// The broker's process id, to sample its CPU time and memory.
    public var brokerPID: Int32?
    public var seed: UInt64 = 42
    public var area: Area
    /// This program, to spawn workers (`tracker-sim worker`).
    public var executable: String?
    /// The command line, for the report.
    public var command = ""
    public var runID = FleetConfiguration.makeRunID()

    /// The most connections a worker process opens: a process may hold 20,000 open files here.
    public static let connectionsPerWorker = 19_000
    public static let maximumConnections = 200_000
    public static let maximumDuration = 600.0

    public init(scenario: BenchScenario, webSocketURL: String, apiURL: String, backendKey: String, jwtSecret: String, area: Area) {
        self.scenario = scenario
        self.webSocketURL = webSocketURL
        self.apiURL = apiURL
        self.backendKey = backendKey
        self.jwtSecret = jwtSecret
        self.area = area
    }

    /// Where to connect, parsed from ``webSocketURL``.
    /// - Throws: ``SimulationError`` when it is not a `ws://` address on this machine.
    public func target() throws -> LoadClient.Target {
        guard let components = URLComponents(string: webSocketURL), components.scheme == "ws", let host = components.host else {
            throw SimulationError("--broker must be a ws:// address on this machine, such as ws://127.0.0.1:8080")
        }
        let address = host == "localhost" ? "127.0.0.1" : host
        guard Self.isLoopback(address) else {
            throw SimulationError("the bench only targets this machine (127.0.0.0/8 or localhost), not \(host)")
        }
        let path: String
        switch server {
        case .broker: path = components.path.isEmpty || components.path == "/" ? "/v1/ws" : components.path
        // The broker's default path means nothing to the baseline, which takes its channel from the path.
        case .baseline: path = components.path.isEmpty || components.path == "/" || components.path == "/v1/ws" ? BenchServer.baselineBasePath : components.path
        }
        return LoadClient.Target(host: address, port: components.port ?? 80, path: path)
    }

    /// Whether `address` is an IPv4 loopback address (127.0.0.0/8).
    public static func isLoopback(_ address: String) -> Bool {
        let parts = address.split(separator: ".")
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// What is out of bounds, or `nil`.
    public var problem: String? {
        func outside(_ value: Double, _ range: ClosedRange<Double>) -> Bool { !(value.isFinite && range.contains(value)) }
        if !(1...Self.maximumConnections).contains(connections) { return "--connections must be from 1 to \(Self.maximumConnections)" }
        if !(1...Self.maximumConnections / 2).contains(pairs) { return "--pairs must be from 1 to \(Self.maximumConnections / 2)" }
        if !(1...Self.maximumConnections / 2).contains(volunteers) { return "--volunteers must be from 1 to \(Self.maximumConnections / 2)" }
        if !(1...Self.maximumConnections).contains(watchers) { return "--watchers must be from 1 to \(Self.maximumConnections)" }
        if !(1...1_000_000).contains(positions) { return "--positions must be from 1 to 1000000" }
        if outside(rate, 0.1...200_000) { return "--rate must be from 0.1 to 200000 positions per second" }
        if outside(interval, 0.01...3600) { return "--interval must be from 10 ms to 1 h" }
        if outside(duration, 1...Self.maximumDuration) { return "--duration must be from 1 s to \(Int(Self.maximumDuration)) s" }
        if scenario == .fanout, Double(positions) / rate > Self.maximumDuration {
            return "--positions / --rate must be at most \(Int(Self.maximumDuration)) s"
        }
        if !(0...64).contains(procs) { return "--procs must be from 0 to 64" }
        if !(100...28_000).contains(perAddress) { return "--per-address must be from 100 to 28000" }
        if !(1...1_024).contains(concurrency) { return "--concurrency must be from 1 to 1024" }
        return nil
    }
}
