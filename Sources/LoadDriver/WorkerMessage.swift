import FleetSimulation

/// What a bench worker reports to the coordinator, one JSON object per line on its standard output.
public struct WorkerMessage: Codable, Sendable {
    public enum Kind: String, Codable, Sendable {
        /// Connecting: how many are up so far.
        case progress
        /// Every connection of the plan is up (or has failed); waiting for `go`.
        case ready
        /// The load phase is over; `result` holds the counts.
        case result
        /// The connections are closed; the worker exits.
        case closed
        /// The worker cannot go on; `message` says why.
        case failed
    }

    public var kind: Kind
    public var worker: Int
    public var connected: Int?
    public var result: WorkerResult?
    public var message: String?

    public init(kind: Kind, worker: Int, connected: Int? = nil, result: WorkerResult? = nil, message: String? = nil) {
        self.kind = kind
        self.worker = worker
        self.connected = connected
        self.result = result
        self.message = message
    }
}

/// A command from the coordinator to a worker, one word per line on its standard input.
public enum WorkerCommand: String, Codable, Sendable {
    /// Start the load phase.
    case go
    /// Close every connection and exit.
    case close
}

/// The counts of one worker, merged by the coordinator into the report.
public struct WorkerResult: Codable, Sendable {
    public var connected = 0
    public var connectFailures = 0
    public var published = 0
    public var deliveries = 0
    public var gaps = 0
    public var duplicates = 0
    public var closedByServer = 0
    public var otherFrames = 0
    /// `error` frames and failures by code.
    public var errors: [String: Int] = [:]
    public var firstFailure: String?
    public var latency = LatencyHistogram()
    /// The same latencies second by second of send time.
    public var latencyTimeline = LatencyTimeline()
    public var connectLatency = LatencyHistogram()
    /// Wall-clock microseconds when the storm started and when its last handshake ended (connect scenario).
    public var stormStart: Int64?
    public var stormEnd: Int64?

    public init() {}

    init(
        connected: Int, connectFailures: Int, published: Int, deliveries: Int, gaps: Int, duplicates: Int, closedByServer: Int,
        otherFrames: Int, errors: [String: Int], firstFailure: String?, latency: LatencyHistogram, latencyTimeline: LatencyTimeline,
        connectLatency: LatencyHistogram
    ) {
        self.connected = connected
        self.connectFailures = connectFailures
        self.published = published
        self.deliveries = deliveries
        self.gaps = gaps
        self.duplicates = duplicates
        self.closedByServer = closedByServer
        self.otherFrames = otherFrames
        self.errors = errors
        self.firstFailure = firstFailure
        self.latency = latency
        self.latencyTimeline = latencyTimeline
        self.connectLatency = connectLatency
    }

    /// Adds another worker's counts.
    public mutating func merge(_ other: WorkerResult) {
        connected += other.connected
        connectFailures += other.connectFailures
        published += other.published
        deliveries += other.deliveries
        gaps += other.gaps
        duplicates += other.duplicates
        closedByServer += other.closedByServer
        otherFrames += other.otherFrames
        errors.merge(other.errors, uniquingKeysWith: +)
        firstFailure = firstFailure ?? other.firstFailure
        latency.merge(other.latency)
        latencyTimeline.merge(other.latencyTimeline)
        connectLatency.merge(other.connectLatency)
        stormStart = [stormStart, other.stormStart].compactMap { $0 }.min()
        stormEnd = [stormEnd, other.stormEnd].compactMap { $0 }.max()
    }
}
