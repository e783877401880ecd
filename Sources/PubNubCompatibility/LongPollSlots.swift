import NIOConcurrencyHelpers

/// How many subscribe long polls may be held at once: per identity, and in all. A poll past either limit is
/// answered 429 at once instead of being held.
package final class LongPollSlots: Sendable {
    private struct Held {
        var total = 0
        var byIdentity: [String: Int] = [:]
    }

    private let held = NIOLockedValueBox(Held())
    package let perIdentity: Int
    package let total: Int

    package init(perIdentity: Int, total: Int) {
        self.perIdentity = perIdentity
        self.total = total
    }

    /// Takes a slot for `identity`.
    /// - Returns: whether one was free; a `true` must be given back with ``release(_:)``.
    package func take(_ identity: String) -> Bool {
        held.withLockedValue { held in
            guard held.total < total, held.byIdentity[identity, default: 0] < perIdentity else { return false }
            held.total += 1
            held.byIdentity[identity, default: 0] += 1
            return true
        }
    }

    /// Gives back a slot ``take(_:)`` gave.
    package func release(_ identity: String) {
        held.withLockedValue { held in
            held.total -= 1
            let left = held.byIdentity[identity, default: 1] - 1
            held.byIdentity[identity] = left > 0 ? left : nil
        }
    }

    /// Polls held now.
    package var count: Int { held.withLockedValue { $0.total } }
}
