import FleetSimulation
import Synchronization

/// The counters of one bench worker, written by every connection's handler on the event loops.
///
/// Counters are atomics; the latency histograms and the tallies of error codes are behind mutexes held for a
/// few instructions.
public final class LoadStats: Sendable {
    private let connected = Atomic<Int>(0)
    private let connectFailures = Atomic<Int>(0)
    private let published = Atomic<Int>(0)
    private let deliveries = Atomic<Int>(0)
    private let gaps = Atomic<Int>(0)
    private let duplicates = Atomic<Int>(0)
    private let closedByServer = Atomic<Int>(0)
    private let otherFrames = Atomic<Int>(0)
    private let latency = Mutex(Latencies())
    private let connectLatency = Mutex(LatencyHistogram())
    private let errors = Mutex<[String: Int]>([:])
    private let firstFailure = Mutex<String?>(nil)

    public init() {}

    /// The counters a handler bumps.
    enum Counter {
        case connected, connectFailures, published, deliveries, gaps, duplicates, closedByServer, otherFrames
    }

    func add(_ counter: Counter, _ amount: Int = 1) {
        switch counter {
        case .connected: connected.wrappingAdd(amount, ordering: .relaxed)
        case .connectFailures: connectFailures.wrappingAdd(amount, ordering: .relaxed)
        case .published: published.wrappingAdd(amount, ordering: .relaxed)
        case .deliveries: deliveries.wrappingAdd(amount, ordering: .relaxed)
        case .gaps: gaps.wrappingAdd(amount, ordering: .relaxed)
        case .duplicates: duplicates.wrappingAdd(amount, ordering: .relaxed)
        case .closedByServer: closedByServer.wrappingAdd(amount, ordering: .relaxed)
        case .otherFrames: otherFrames.wrappingAdd(amount, ordering: .relaxed)
        }
    }

    func value(_ counter: Counter) -> Int {
        switch counter {
        case .connected: connected.load(ordering: .relaxed)
        case .connectFailures: connectFailures.load(ordering: .relaxed)
        case .published: published.load(ordering: .relaxed)
        case .deliveries: deliveries.load(ordering: .relaxed)
        case .gaps: gaps.load(ordering: .relaxed)
        case .duplicates: duplicates.load(ordering: .relaxed)
        case .closedByServer: closedByServer.load(ordering: .relaxed)
        case .otherFrames: otherFrames.load(ordering: .relaxed)
        }
    }

    /// The run's latencies, and the same second by second of send time.
    private struct Latencies {
        var histogram = LatencyHistogram()
        var timeline = LatencyTimeline()
    }

    /// A delivery sent at `sentMicroseconds` (wall clock) that arrived `latencyMicroseconds` later.
    func delivered(sentMicroseconds: Int64, latencyMicroseconds: Int64) {
        deliveries.wrappingAdd(1, ordering: .relaxed)
        latency.withLock {
            $0.histogram.record(microseconds: latencyMicroseconds)
            $0.timeline.record(sentMicroseconds: sentMicroseconds, latencyMicroseconds: latencyMicroseconds)
        }
    }

    /// A handshake that took this long, from the TCP connect to the `welcome` frame.
    func connectedAfter(microseconds: Int64) {
        connectLatency.withLock { $0.record(microseconds: microseconds) }
    }

    /// An `error` frame or a failure, tallied by its code.
    func error(_ code: String, detail: String? = nil) {
        errors.withLock { $0[code, default: 0] += 1 }
        if let detail { firstFailure.withLock { if $0 == nil { $0 = "\(code): \(detail)" } } }
    }

    /// Everything counted so far.
    func result() -> WorkerResult {
        let latencies = latency.withLock { $0 }
        return WorkerResult(
            connected: value(.connected), connectFailures: value(.connectFailures), published: value(.published),
            deliveries: value(.deliveries), gaps: value(.gaps), duplicates: value(.duplicates), closedByServer: value(.closedByServer),
            otherFrames: value(.otherFrames), errors: errors.withLock { $0 }, firstFailure: firstFailure.withLock { $0 },
            latency: latencies.histogram, latencyTimeline: latencies.timeline, connectLatency: connectLatency.withLock { $0 })
    }
}
