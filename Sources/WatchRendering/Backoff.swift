/// How long to wait before reconnect attempt `n`: 0.5 s doubling up to 15 s, each delay varied by ±20 %.
///
/// The jitter keeps many watchers from reconnecting in the same instant after a broker restart.
public struct Backoff: Sendable, Equatable {
    /// Seconds before the first retry.
    public var initial: Double
    /// The longest delay, in seconds.
    public var maximum: Double
    /// The fraction a delay may vary either way.
    public var jitter: Double

    public init(initial: Double = 0.5, maximum: Double = 15, jitter: Double = 0.2) {
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
    }

    /// Seconds to wait before attempt `attempt` (1 for the first retry), with `random` drawn from [0, 1).
    public func delay(attempt: Int, random: Double) -> Double {
        let exponent = Double(min(max(attempt, 1) - 1, 30))
        let base = min(maximum, initial * Double.pow2(exponent))
        let random = min(max(random, 0), 1)
        return min(maximum, base * (1 - jitter + 2 * jitter * random))
    }
}

extension Double {
    /// 2 to the power of a whole `exponent` ≥ 0, without Foundation.
    fileprivate static func pow2(_ exponent: Double) -> Double {
        var result = 1.0
        var remaining = Int(exponent)
        while remaining > 0 {
            result *= 2
            remaining -= 1
        }
        return result
    }
}
