import Histogram

/// Latencies in microseconds, recorded in an HdrHistogram (3 significant digits, up to one hour).
///
/// Encodes compactly as the recorded `[value, count]` pairs, so worker processes can send theirs to the
/// coordinator, which merges them.
public struct LatencyHistogram: Sendable, Codable {
    private var histogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: Self.highest, numberOfSignificantValueDigits: .three)
    /// Latencies below zero (clocks that disagree); recorded as 0.
    public private(set) var negative: UInt64 = 0

    static let highest: UInt64 = 3_600_000_000

    public init() {}

    /// Records one latency in microseconds.
    public mutating func record(microseconds: Int64) {
        if microseconds < 0 { negative += 1 }
        histogram.record(UInt64(min(max(0, microseconds), Int64(Self.highest))))
    }

    /// Adds every value of `other`.
    public mutating func merge(_ other: LatencyHistogram) {
        histogram.add(other.histogram)
        negative += other.negative
    }

    public var count: UInt64 { histogram.totalCount }

    /// Percentiles and extremes in milliseconds.
    public var summary: LatencySummary {
        guard histogram.totalCount > 0 else { return LatencySummary() }
        let ms = LatencySummary.milliseconds
        return LatencySummary(
            count: histogram.totalCount, p50: ms(histogram.valueAtPercentile(50)), p90: ms(histogram.valueAtPercentile(90)),
            p99: ms(histogram.valueAtPercentile(99)), p999: ms(histogram.valueAtPercentile(99.9)), max: ms(histogram.max),
            mean: (histogram.mean / 1000 * 1000).rounded() / 1000)
    }

    private enum CodingKeys: String, CodingKey {
        case values, negative
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        negative = try container.decodeIfPresent(UInt64.self, forKey: .negative) ?? 0
        for pair in try container.decode([[UInt64]].self, forKey: .values) where pair.count == 2 {
            histogram.record(min(pair[0], Self.highest), count: pair[1])
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(histogram.recordedValues().map { [$0.value, $0.count] }, forKey: .values)
        try container.encode(negative, forKey: .negative)
    }
}

/// A latency distribution in milliseconds, as reports show it.
public struct LatencySummary: Codable, Sendable, Equatable {
    public var count: UInt64 = 0
    public var p50: Double = 0
    public var p90: Double = 0
    public var p99: Double = 0
    public var p999: Double = 0
    public var max: Double = 0
    public var mean: Double = 0

    /// Microseconds as milliseconds, to the microsecond, as reports show them.
    public static func milliseconds(_ micros: UInt64) -> Double { (Double(micros) / 1000 * 1000).rounded() / 1000 }

    public init(count: UInt64 = 0, p50: Double = 0, p90: Double = 0, p99: Double = 0, p999: Double = 0, max: Double = 0, mean: Double = 0) {
        self.count = count
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.p999 = p999
        self.max = max
        self.mean = mean
    }
}
