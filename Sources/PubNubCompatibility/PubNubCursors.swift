import NIOConcurrencyHelpers

/// Where a subscribe to several channels stands on each: PubNub's SDKs carry one timetoken for all the channels
/// of a subscribe, while each channel counts its own seqs. A one-channel subscribe's timetoken is that
/// channel's seq and needs nothing kept; a timetoken of several channels names an entry here, kept for the
/// identity it was given to.
///
/// Bounded: past `capacity` entries the oldest are forgotten, and a timetoken no longer (or never) kept here is
/// answered as a handshake, as PubNub answers a timetoken it does not know: the caller resumes from where it
/// stands now. Entries never cross nodes or restarts; a one-channel subscribe resumes anywhere.
package final class PubNubCursors: Sendable {
    /// Every cursor is at least this: above every channel seq (milliseconds × 1000 until the year 2262), so the
    /// two kinds of timetoken never meet.
    package static let floor: Int64 = 1 << 62

    private struct Entry {
        var identity: String
        var seqs: [String: Int64]
    }

    private struct Kept {
        var entries: [Int64: Entry] = [:]
        /// The cursors in the order they were made, in a ring: the oldest is overwritten, and forgotten.
        var ring: [Int64] = []
        var oldest = 0
    }

    private let kept = NIOLockedValueBox(Kept())
    private let capacity: Int

    package init(capacity: Int = 100_000) {
        self.capacity = max(1, capacity)
    }

    /// Keeps where `identity` stands on each channel.
    /// - Returns: the timetoken that names it: random, so that it tells nothing of anyone else's subscribes.
    package func keep(_ seqs: [String: Int64], for identity: String) -> Int64 {
        kept.withLockedValue { kept in
            var cursor = Int64.random(in: Self.floor..<Int64.max)
            while kept.entries[cursor] != nil { cursor = Int64.random(in: Self.floor..<Int64.max) }
            kept.entries[cursor] = Entry(identity: identity, seqs: seqs)
            if kept.ring.count < capacity {
                kept.ring.append(cursor)
            } else {
                kept.entries[kept.ring[kept.oldest]] = nil
                kept.ring[kept.oldest] = cursor
                kept.oldest = (kept.oldest + 1) % capacity
            }
            return cursor
        }
    }

    /// Where `timetoken` says `identity` stood, or `nil` when it names no entry of that identity.
    package func seqs(of timetoken: Int64, for identity: String) -> [String: Int64]? {
        kept.withLockedValue { kept in
            guard let entry = kept.entries[timetoken], entry.identity == identity else { return nil }
            return entry.seqs
        }
    }
}
