import BrokerCore

/// The subscribe long polls held at once, bounded per identity and in all (a poll past either limit is answered
/// 429 at once instead of being held), and the end of each one's hold: ``wakeEndedHolds(at:)``, called once a
/// second for all of them, wakes the polls whose hold has passed, so that no poll needs a timer of its own.
package final class LongPollSlots: Sendable {
    /// A held poll's place, given back with ``release(_:)``.
    package struct Slot: Sendable {
        fileprivate let id: UInt64
        fileprivate let identity: String
    }

    private struct Hold {
        let endsAt: ContinuousClock.Instant
        let waker: PollWaker
    }

    private struct Held {
        var byIdentity: [String: Int] = [:]
        var holds: [UInt64: Hold] = [:]
        var nextID: UInt64 = 0
    }

    private let held = LockedValue(Held())
    package let perIdentity: Int
    package let total: Int

    package init(perIdentity: Int, total: Int) {
        self.perIdentity = perIdentity
        self.total = total
    }

    /// Takes a slot for a poll of `identity`, held until `holdEndsAt`, when `waker` is woken.
    /// - Returns: the slot, or `nil` when none was free; a slot must be given back with ``release(_:)``.
    package func take(_ identity: String, waker: PollWaker, holdEndsAt: ContinuousClock.Instant) -> Slot? {
        held.withLock { held in
            guard held.holds.count < total, held.byIdentity[identity, default: 0] < perIdentity else { return nil }
            held.nextID += 1
            held.holds[held.nextID] = Hold(endsAt: holdEndsAt, waker: waker)
            held.byIdentity[identity, default: 0] += 1
            return Slot(id: held.nextID, identity: identity)
        }
    }

    /// Gives back a slot ``take(_:waker:holdEndsAt:)`` gave.
    package func release(_ slot: Slot) {
        held.withLock { held in
            guard held.holds.removeValue(forKey: slot.id) != nil else { return }
            let left = held.byIdentity[slot.identity, default: 1] - 1
            held.byIdentity[slot.identity] = left > 0 ? left : nil
        }
    }

    /// Wakes every held poll whose hold has ended at `now` (it then answers empty and gives its slot back).
    package func wakeEndedHolds(at now: ContinuousClock.Instant = .now) {
        let ended = held.withLock { held in held.holds.values.filter { $0.endsAt <= now }.map(\.waker) }
        for waker in ended { waker.wake() }
    }

    /// Polls held now.
    package var count: Int { held.withLock { $0.holds.count } }
}
