import Atomics
import FleetSimulation
import NIOConcurrencyHelpers

/// The counters of one bench worker, written by every connection's handler on the event loops.
///
/// Counters are atomics; the latency histograms and the tallies of error codes are behind mutexes held for a
/// few instructions.
public final class LoadStats: Sendable {
    private let connected = ManagedAtomic<Int>(0)
    private let connectFailures = ManagedAtomic<Int>(0)
    private let published = ManagedAtomic<Int>(0)
    private let deliveries = ManagedAtomic<Int>(0)
    private let gaps = ManagedAtomic<Int>(0)
    private let duplicates = ManagedAtomic<Int>(0)
    private let closedByServer = ManagedAtomic<Int>(0)
    private let otherFrames = ManagedAtomic<Int>(0)
    private let latency = NIOLockedValueBox(Latencies())
    private let connectLatency = NIOLockedValueBox(LatencyHistogram())
    private let errors = NIOLockedValueBox<[String: Int]>([:])
    private let firstFailure = NIOLockedValueBox<String?>(nil)

    public init() {}

    /// The counters a handler bumps.
    enum Counter {
        case connected, connectFailures, published, deliveries, gaps, duplicates, closedByServer, otherFrames
    }

    func add(_ counter: Counter, _ amount: Int = 1) {
        switch counter {
        case .connected: connected.wrappingIncrement(by: amount, ordering: .relaxed)
        case .connectFailures: connectFailures.wrappingIncrement(by: amount, ordering: .relaxed)
        case .published: published.wrappingIncrement(by: amount, ordering: .relaxed)
        case .deliveries: deliveries.wrappingIncrement(by: amount, ordering: .relaxed)
        case .gaps: gaps.wrappingIncrement(by: amount, ordering: .relaxed)
        case .duplicates: duplicates.wrappingIncrement(by: amount, ordering: .relaxed)
        case .closedByServer: closedByServer.wrappingIncrement(by: amount, ordering: .relaxed)
        case .otherFrames: otherFrames.wrappingIncrement(by: amount, ordering: .relaxed)
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
        deliveries.wrappingIncrement(by: 1, ordering: .relaxed)
        latency.withLockedValue {
            $0.histogram.record(microseconds: latencyMicroseconds)
            $0.timeline.record(sentMicroseconds: sentMicroseconds, latencyMicroseconds: latencyMicroseconds)
        }
    }

    /// A handshake that took this long, from the TCP connect to the `welcome` frame.
    func connectedAfter(microseconds: Int64) {
        connectLatency.withLockedValue { $0.record(microseconds: microseconds) }
    }

    /// An `error` frame or a failure, tallied by its code.
    func error(_ code: String, detail: String? = nil) {
        errors.withLockedValue { $0[code, default: 0] += 1 }
        if let detail { firstFailure.withLockedValue { if $0 == nil { $0 = "\(code): \(detail)" } } }
    }

    /// Everything counted so far.
    func result() -> WorkerResult {
        let latencies = latency.withLockedValue { $0 }
        return WorkerResult(
            connected: value(.connected), connectFailures: value(.connectFailures), published: value(.published),
            deliveries: value(.deliveries), gaps: value(.gaps), duplicates: value(.duplicates), closedByServer: value(.closedByServer),
            otherFrames: value(.otherFrames), errors: errors.withLockedValue { $0 }, firstFailure: firstFailure.withLockedValue { $0 },
            latency: latencies.histogram, latencyTimeline: latencies.timeline, connectLatency: connectLatency.withLockedValue { $0 })
    }
}
