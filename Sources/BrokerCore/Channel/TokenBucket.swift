/// A token bucket: `rate` tokens per second, holding at most `burst`.
package struct TokenBucket: Sendable {
    private let ratePerMillisecond: Double
    private let burst: Double
    private var tokens: Double
    private var updatedAt: Int64

    package init(rate: Double, burst: Int, now: Int64) {
        self.ratePerMillisecond = rate / 1000
        self.burst = Double(burst)
        self.tokens = Double(burst)
        self.updatedAt = now
    }

    /// Takes one token if there is one at time `now` (milliseconds).
    package mutating func take(now: Int64) -> Bool {
        if now > updatedAt {
            tokens = min(burst, tokens + Double(now - updatedAt) * ratePerMillisecond)
            updatedAt = now
        }
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Whether the bucket holds its whole burst again at time `now` (milliseconds), so forgetting it
    /// loses nothing.
    package func isFull(now: Int64) -> Bool {
        min(burst, tokens + Double(max(0, now - updatedAt)) * ratePerMillisecond) >= burst
    }
}
