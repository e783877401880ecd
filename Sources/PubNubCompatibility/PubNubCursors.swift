import BrokerCore

/// Where a subscribe to several channels stands on each: PubNub's SDKs carry one timetoken for all the channels
/// of a subscribe, while each channel counts its own seqs. A one-channel subscribe's timetoken is that
/// channel's seq and needs nothing kept; a timetoken of several channels names an entry here, kept for the
/// identity it was given to.
///
/// Bounded per identity and in all: an identity keeps its ``perIdentity`` newest entries, so that one caller's
/// subscribes, however many, never push out another's; past `capacity` entries in all (as many identities as
/// `capacity / perIdentity` polling at once) the oldest are forgotten. A timetoken no longer (or never) kept here
/// is answered as a handshake, as PubNub answers a timetoken it does not know: the caller resumes from where it
/// stands now. Entries never cross nodes or restarts; a one-channel subscribe resumes anywhere.
package final class PubNubCursors: Sendable {
    /// Every cursor is at least this: above every channel seq (milliseconds × 1000 until the year 2262), so the
    /// two kinds of timetoken never meet.
    package static let floor: Int64 = 1 << 62
    /// How many timetokens one identity keeps at once: an SDK polls with its newest only, and an app on a few
    /// devices under one identity keeps a few.
    package static let perIdentity = 16

    private struct Entry {
        var identity: String
        var seqs: [String: Int64]
    }

    private struct Kept {
        var entries: [Int64: Entry] = [:]
        /// Each identity's cursors, oldest first.
        var byIdentity: [String: [Int64]] = [:]
        /// Every cursor in the order it was made, from `head` on; some may have been forgotten already (an
        /// identity's oldest), and are skipped and compacted away.
        var order: [Int64] = []
        var head = 0

        mutating func add(_ cursor: Int64, _ entry: Entry) {
            entries[cursor] = entry
            byIdentity[entry.identity, default: []].append(cursor)
            order.append(cursor)
            // Forgotten cursors must not pile up in `order` when nothing reaches the bound: keep it within twice
            // the entries kept.
            if order.count - head > 2 * entries.count + 64 {
                order = order[head...].filter { entries[$0] != nil }
                head = 0
            }
        }

        mutating func forget(_ cursor: Int64) {
            guard let entry = entries.removeValue(forKey: cursor) else { return }
            byIdentity[entry.identity]?.removeAll { $0 == cursor }
            if byIdentity[entry.identity]?.isEmpty == true { byIdentity[entry.identity] = nil }
        }

        /// Forgets the oldest cursor still kept, whoever's it is.
        mutating func forgetOldest() {
            while head < order.count {
                let cursor = order[head]
                head += 1
                if entries[cursor] != nil {
                    forget(cursor)
                    return
                }
            }
        }
    }

    private let kept = LockedValue(Kept())
    private let capacity: Int

    package init(capacity: Int = 100_000) {
        self.capacity = max(1, capacity)
    }

    /// Keeps where `identity` stands on each channel, forgetting that identity's oldest past ``perIdentity``.
    /// - Returns: the timetoken that names it: random, so that it tells nothing of anyone else's subscribes.
    package func keep(_ seqs: [String: Int64], for identity: String) -> Int64 {
        kept.withLock { kept in
            var cursor = Int64.random(in: Self.floor..<Int64.max)
            while kept.entries[cursor] != nil { cursor = Int64.random(in: Self.floor..<Int64.max) }
            if let own = kept.byIdentity[identity], own.count >= Self.perIdentity, let oldestOwn = own.first {
                kept.forget(oldestOwn)
            } else if kept.entries.count >= capacity {
                kept.forgetOldest()
            }
            kept.add(cursor, Entry(identity: identity, seqs: seqs))
            return cursor
        }
    }

    /// Timetokens kept now.
    package var count: Int { kept.withLock { $0.entries.count } }

    /// Where `timetoken` says `identity` stood, or `nil` when it names no entry of that identity.
    package func seqs(of timetoken: Int64, for identity: String) -> [String: Int64]? {
        kept.withLock { kept in
            guard let entry = kept.entries[timetoken], entry.identity == identity else { return nil }
            return entry.seqs
        }
    }
}
