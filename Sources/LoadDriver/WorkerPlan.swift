import FleetSimulation

/// What one bench worker does: which connections it opens, from which source addresses, and what load it makes.
///
/// Sent by the coordinator as the first line of the worker's standard input (JSON). Secrets are not in it: the
/// worker reads the JWT secret from its environment.
public struct WorkerPlan: Codable, Sendable, Equatable {
    public var worker: Int
    public var scenario: BenchScenario
    /// The server measured: the broker (tokens, `welcome`, `subscribe`) or the baseline (a channel per URL path).
    public var server: BenchServer
    public var names: BenchNames
    public var target: LoadClient.Target
    /// This worker's source addresses (127.0.0.x), used in turn as each fills up; empty for the system's choice.
    public var sourceAddresses: [String]
    /// Connections per source address before the next one is used.
    public var perAddress: Int
    /// Donors to connect and subscribe (indices into ``BenchNames``).
    public var subscribers: Range<Int>
    /// Volunteers to connect and publish from.
    public var publishers: Range<Int>
    /// Identities of the connect storm, opened after `go`.
    public var storm: Range<Int>
    /// Positions per second of each publisher.
    public var publishRate: Double
    /// Positions each publisher sends before it stops; `nil` for as many as fit in ``duration``.
    public var positionsPerPublisher: Int?
    /// Seconds of the load phase (the hold, for `idle`).
    public var duration: Double
    /// Publish fixes along street-like routes in this area (fleet); otherwise points near its centre.
    public var area: Area
    public var seed: UInt64
    /// Handshakes in flight at once, per worker.
    public var concurrency: Int
    public var tokenTTL: Int64

    public init(
        worker: Int, scenario: BenchScenario, names: BenchNames, target: LoadClient.Target, sourceAddresses: [String], perAddress: Int,
        subscribers: Range<Int>, publishers: Range<Int>, storm: Range<Int>, publishRate: Double, positionsPerPublisher: Int?,
        duration: Double, area: Area, seed: UInt64, concurrency: Int, tokenTTL: Int64, server: BenchServer = .broker
    ) {
        self.worker = worker
        self.scenario = scenario
        self.server = server
        self.names = names
        self.target = target
        self.sourceAddresses = sourceAddresses
        self.perAddress = perAddress
        self.subscribers = subscribers
        self.publishers = publishers
        self.storm = storm
        self.publishRate = publishRate
        self.positionsPerPublisher = positionsPerPublisher
        self.duration = duration
        self.area = area
        self.seed = seed
        self.concurrency = concurrency
        self.tokenTTL = tokenTTL
    }

    /// The source address of this worker's `index`-th connection.
    public func sourceAddress(forConnection index: Int) -> String? {
        guard !sourceAddresses.isEmpty else { return nil }
        return sourceAddresses[min(index / max(1, perAddress), sourceAddresses.count - 1)]
    }

    /// Every connection this worker opens.
    public var connectionCount: Int { subscribers.count + publishers.count + storm.count }
}
