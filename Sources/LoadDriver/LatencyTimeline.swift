import FleetSimulation
import Histogram

/// Latencies grouped by the wall-clock second their positions were sent in, so that a report can tell a tail
/// spread evenly over the run from one that comes in bursts (a second or two in which the machine was busy
/// with something else).
///
/// On a shared machine a run's p99 can be set by a few bad seconds that hit any server alike; the median of
/// the seconds' p99s says what a typical second looked like. Each second keeps a coarser histogram than the
/// run's (2 significant digits, up to a minute), about 20 KB, and at most an hour of seconds is kept, so an
/// hour-long run stays small. Merges across workers like ``LatencyHistogram``: seconds are whole seconds of
/// one clock (`CLOCK_REALTIME`, ``LatencyStamp``), the same in every process of a run.
public struct LatencyTimeline: Sendable, Codable {
    /// The histogram of each second, keyed by the wall-clock second (since the epoch).
    private var seconds: [Int64: Histogram<UInt64>] = [:]

    /// Seconds beyond this many are not kept (an hour by default).
    let maximumSeconds: Int
    /// A latency above a minute is counted as a minute in its second (the run's own histogram keeps it exact).
    static let highest: UInt64 = 60_000_000

    public init() { maximumSeconds = 3_600 }

    init(maximumSeconds: Int) { self.maximumSeconds = maximumSeconds }

    /// Records a delivery sent at `sentMicroseconds` (wall clock) that took `latencyMicroseconds`.
    public mutating func record(sentMicroseconds: Int64, latencyMicroseconds: Int64) {
        let second = sentMicroseconds >= 0 ? sentMicroseconds / 1_000_000 : (sentMicroseconds + 1) / 1_000_000 - 1
        let value = UInt64(min(max(0, latencyMicroseconds), Int64(Self.highest)))
        if seconds[second] == nil {
            guard let histogram = makeHistogram() else { return }
            seconds[second] = histogram
        }
        // Through the dictionary's subscript, in place: a copy of the histogram would copy its 20 KB of counts.
        seconds[second]?.record(value)
    }

    /// Adds every second of `other`.
    public mutating func merge(_ other: LatencyTimeline) {
        for (second, histogram) in other.seconds {
            if seconds[second] != nil {
                seconds[second]?.add(histogram)
            } else if seconds.count < maximumSeconds {
                seconds[second] = histogram
            }
        }
    }

    /// Each second's figures, in order, numbered from the first second that has a delivery.
    public var summary: LatencyBySecond {
        let all = seconds.sorted { $0.key < $1.key }
        guard let first = all.first?.key else { return LatencyBySecond(seconds: []) }
        let ms = LatencySummary.milliseconds
        return LatencyBySecond(
            seconds: all.map { second, histogram in
                SecondLatency(
                    second: Int(second - first), count: histogram.totalCount, p50: ms(histogram.valueAtPercentile(50)),
                    p99: ms(histogram.valueAtPercentile(99)), max: ms(histogram.max))
            })
    }

    /// A histogram for a new second, or `nil` when ``maximumSeconds`` are kept already.
    private func makeHistogram() -> Histogram<UInt64>? {
        guard seconds.count < maximumSeconds else { return nil }
        return Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: Self.highest, numberOfSignificantValueDigits: .two)
    }

    private enum CodingKeys: String, CodingKey {
        case seconds
    }

    /// One second as `[second, value, count, value, count, ...]`, the recorded values only.
    public init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        for row in try container.decode([[Int64]].self, forKey: .seconds) where row.count % 2 == 1 {
            guard var histogram = seconds.removeValue(forKey: row[0]) ?? makeHistogram() else { break }
            for index in stride(from: 1, to: row.count, by: 2) where row[index] >= 0 && row[index + 1] > 0 {
                histogram.record(min(UInt64(row[index]), Self.highest), count: UInt64(row[index + 1]))
            }
            seconds[row[0]] = histogram
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let rows = seconds.sorted { $0.key < $1.key }.map { second, histogram in
            [second] + histogram.recordedValues().flatMap { [Int64($0.value), Int64($0.count)] }
        }
        try container.encode(rows, forKey: .seconds)
    }
}

/// A run's latency second by second (by send time), and what its seconds' p99s add up to.
public struct LatencyBySecond: Codable, Sendable, Equatable {
    public var seconds: [SecondLatency]
    /// The median of the seconds' p99s, in milliseconds: the tail of a typical second.
    public var medianP99: Double
    /// The highest second's p99, in milliseconds, and which second it was.
    public var highestP99: Double
    public var highestSecond: Int
    /// Seconds whose p99 was more than twice ``medianP99``: bursts.
    public var burstSeconds: Int

    /// Seconds with fewer deliveries than this are left out of the figures (the run's ragged last second).
    static let fewestDeliveries: UInt64 = 100

    public init(seconds: [SecondLatency]) {
        self.seconds = seconds
        let counted = seconds.filter { $0.count >= Self.fewestDeliveries }
        let p99s = counted.map(\.p99).sorted()
        medianP99 = p99s.isEmpty ? 0 : p99s.count % 2 == 1 ? p99s[p99s.count / 2] : (p99s[p99s.count / 2 - 1] + p99s[p99s.count / 2]) / 2
        let highest = counted.max { $0.p99 < $1.p99 }
        highestP99 = highest?.p99 ?? 0
        highestSecond = highest?.second ?? 0
        let median = medianP99
        burstSeconds = counted.filter { $0.p99 > 2 * median }.count
    }
}

/// One second of a run (numbered from 0), in milliseconds.
public struct SecondLatency: Codable, Sendable, Equatable {
    public var second: Int
    public var count: UInt64
    public var p50: Double
    public var p99: Double
    public var max: Double
}
