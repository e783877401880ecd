import BrokerCore
import NIOCore

/// Refusals charged to whoever asked, across all their connections: an identity once its token is verified, a
/// source address before. A budget belongs to the asker, not to a socket, so reconnecting does not refill it: a
/// client that guesses donation ids or channels gets at most `burst` refusals at once and `perMinute` a minute
/// after that, however many sockets it opens and closes (docs/SECURITY.md, "Guessing").
///
/// Each key has a token bucket; a key whose bucket has refilled is forgotten (it loses nothing), and the table
/// holds at most ``maximumKeys``: past it, new keys share one bucket, so a flood of addresses cannot grow the
/// broker, only exhaust that shared bucket.
package final class RefusalBudget: Sendable {
    /// The most keys tracked at once.
    let maximumKeys: Int
    /// Refusals a key may have per minute; also its burst.
    let perMinute: Int
    private let buckets: LockedValue<[String: TokenBucket]>
    private let overflow: LockedValue<TokenBucket>
    private let clock: WallClock

    package init(perMinute: Int, maximumKeys: Int = 65_536, clock: WallClock) {
        self.perMinute = perMinute
        self.maximumKeys = maximumKeys
        self.clock = clock
        self.buckets = LockedValue([:])
        self.overflow = LockedValue(TokenBucket(rate: Double(perMinute) / 60, burst: perMinute, now: clock.now()))
    }

    /// Charges one refusal to `key`.
    /// - Returns: whether the key had budget left; when not, the refusal must not be answered.
    package func charge(_ key: String) -> Bool {
        let now = clock.now()
        let charged: Bool? = buckets.withLock { buckets in
            if buckets[key] == nil {
                guard buckets.count < maximumKeys else { return nil }
                buckets[key] = makeBucket(now: now)
            }
            return buckets[key]!.take(now: now)
        }
        if let charged { return charged }
        return overflow.withLock { $0.take(now: now) }
    }

    /// Whether `key` has no refusal left now (a new request of its would only be refused unanswered). Every upgrade
    /// asks, so while no refusal is on record the key is not even made.
    package func isExhausted(_ key: @autoclosure () -> String) -> Bool {
        let now = clock.now()
        let exhausted: Bool? = buckets.withLock { buckets in
            if buckets.isEmpty { return false }
            guard var bucket = buckets[key()] else { return buckets.count < maximumKeys ? false : nil }
            // A copy: looking does not spend.
            return !bucket.take(now: now)
        }
        if let exhausted { return exhausted }
        return overflow.withLock { bucket in
            var copy = bucket
            return !copy.take(now: now)
        }
    }

    /// Seconds until `key` may be refused once more, for a `Retry-After`; at least 1.
    package var secondsPerRefusal: Int { max(1, 60 / max(1, perMinute)) }

    /// Forgets the keys whose budget has refilled.
    package func sweep() {
        let now = clock.now()
        buckets.withLock { buckets in
            buckets = buckets.filter { !$0.value.isFull(now: now) }
        }
    }

    /// Keys tracked now.
    var count: Int { buckets.withLock { $0.count } }

    private func makeBucket(now: Int64) -> TokenBucket {
        TokenBucket(rate: Double(perMinute) / 60, burst: perMinute, now: now)
    }

    /// The key of a source address: an IPv4 address, or an IPv6 address's /64 network (one host may hold a whole
    /// /64, so anything finer would let it pick a fresh key per request).
    package static func key(for address: SocketAddress?) -> String {
        guard let address else { return "address unknown" }
        switch address {
        case .v4:
            return "address \(address.ipAddress ?? "?")"
        case .v6(let v6):
            var raw = v6.address.sin6_addr
            let bytes = withUnsafeBytes(of: &raw) { Array($0.prefix(8)) }
            return "network " + bytes.map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
        case .unixDomainSocket:
            return "address local"
        }
    }
}
