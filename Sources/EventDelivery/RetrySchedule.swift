/// When to try a failed delivery again: exponential backoff with full jitter, and a total time after which the
/// delivery is given up.
///
/// Full jitter (a uniform delay between 0 and the exponential bound) spreads the retries of many deliveries that
/// failed together, say while a receiver was down, so they do not all come back at the same moment. Times are in
/// milliseconds, as the outbox keeps them.
package struct RetrySchedule: Sendable, Equatable {
    /// The bound of the first retry's delay.
    package var baseMilliseconds: Int64
    /// The largest bound, reached after a few doublings.
    package var capMilliseconds: Int64
    /// How long after the first attempt the delivery is given up.
    package var giveUpAfterMilliseconds: Int64

    /// A schedule; `base` must be positive, `cap` at least `base`, `giveUpAfter` not negative.
    package init(baseMilliseconds: Int64, capMilliseconds: Int64, giveUpAfterMilliseconds: Int64) {
        precondition(baseMilliseconds > 0 && capMilliseconds >= baseMilliseconds && giveUpAfterMilliseconds >= 0)
        self.baseMilliseconds = baseMilliseconds
        self.capMilliseconds = capMilliseconds
        self.giveUpAfterMilliseconds = giveUpAfterMilliseconds
    }

    /// The bound of the delay after failed attempt `attempt` (from 1): `min(cap, base * 2^(attempt - 1))`.
    package func bound(afterAttempt attempt: Int) -> Int64 {
        let doublings = max(0, attempt - 1)
        // Past 62 doublings the product overflows; the cap has long been reached by then anyway.
        guard doublings < 62, baseMilliseconds <= capMilliseconds >> Int64(doublings) else { return capMilliseconds }
        return min(capMilliseconds, baseMilliseconds << Int64(doublings))
    }

    /// The delay before the next attempt after failed attempt `attempt` (from 1), uniform in
    /// `0...bound(afterAttempt:)`.
    package func delay(afterAttempt attempt: Int, random: inout some RandomNumberGenerator) -> Int64 {
        Int64.random(in: 0...bound(afterAttempt: attempt), using: &random)
    }

    /// Whether a delivery first tried at `firstAttemptAt` is given up at `now` (both in ms since the epoch).
    package func givesUp(firstAttemptAt: Int64, now: Int64) -> Bool {
        now - firstAttemptAt >= giveUpAfterMilliseconds
    }

    /// When to try again after failed attempt `attempt` at `now`, or `nil` when the delivery is given up.
    /// A delay that would reach past the give-up time is cut to it, so the last attempt is made at that time rather
    /// than skipped.
    package func nextAttempt(afterAttempt attempt: Int, firstAttemptAt: Int64, now: Int64, random: inout some RandomNumberGenerator)
        -> Int64?
    {
        guard !givesUp(firstAttemptAt: firstAttemptAt, now: now) else { return nil }
        return min(now + delay(afterAttempt: attempt, random: &random), firstAttemptAt + giveUpAfterMilliseconds)
    }
}
