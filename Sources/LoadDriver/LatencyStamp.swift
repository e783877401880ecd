import Foundation

/// How the bench measures latency across processes to a microsecond, with nothing but the public wire format.
///
/// A position's `timestamp` holds milliseconds only. The bench publisher reads the wall clock in microseconds
/// when it sends, puts the milliseconds in `timestamp` and the remaining microseconds in the fraction of
/// `accuracy`: `accuracy = 5 + micros / 1000`, so `5.437` means 5 m and 437 µs. The broker forwards both
/// numbers unchanged (shortest round-trip form), and the subscriber, on the same machine and so the same
/// clock, subtracts. Every process of a run reads one `CLOCK_REALTIME`, so the figure is exact to the
/// microsecond whichever worker published. (Fleet mode, whose accuracies are realistic, keeps each fix's
/// send time in memory instead, since its publisher and donor share one process.)
public enum LatencyStamp {
    /// The base accuracy in metres; the microseconds are added as its fraction.
    static let baseAccuracy = 5.0

    /// The wall clock in microseconds since the epoch.
    public static func nowMicroseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
    }

    /// The `timestamp` and `accuracy` that carry `micros`.
    public static func stamp(_ micros: Int64) -> (timestamp: Int64, accuracy: Double) {
        (micros / 1_000, baseAccuracy + Double(micros % 1_000) / 1_000)
    }

    /// The send time carried by a position stamped with ``stamp(_:)``, or `nil` when the accuracy does not carry one.
    public static func microseconds(timestamp: Int64, accuracy: Double?) -> Int64? {
        guard let accuracy, accuracy >= baseAccuracy, accuracy < baseAccuracy + 1 else { return nil }
        return timestamp * 1_000 + Int64(((accuracy - baseAccuracy) * 1_000).rounded())
    }
}
