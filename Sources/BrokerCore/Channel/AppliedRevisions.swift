import DequeModule

/// The store revision of each donation change a hub applied, so a change arriving late (over the cluster bus,
/// after a newer one) is ignored instead of undoing the newer one.
///
/// Entries of ended donations are forgotten after ``retentionMilliseconds``: by then no older change of
/// theirs can still be in flight, and the map does not grow with every donation ever made.
///
/// It also knows which revisions this node has seen, not only the highest: every revision up to ``complete`` is
/// accounted for (seen, superseded by a later change of its donation, or never committed), and ``seenAbove`` holds
/// the ones seen past a revision not seen yet. A cluster node that finds a gap reads every change after
/// ``complete`` from the store: the highest applied revision would skip a change committed elsewhere while this
/// node's listener was away and this node made one of its own.
struct AppliedRevisions: Sendable {
    private(set) var byDonation: [String: Int64] = [:]
    /// The highest revision applied or loaded.
    private(set) var highest: Int64 = 0
    /// Every revision up to this one is accounted for.
    private(set) var complete: Int64 = 0
    /// Revisions seen above ``complete``.
    private(set) var seenAbove = Set<Int64>()
    private var ended = Deque<(id: String, revision: Int64, at: Int64)>()

    /// How long an ended donation's revision is remembered.
    static let retentionMilliseconds: Int64 = 10 * 60 * 1000

    /// Whether a change with `revision` is newer than what was applied for `id`.
    func isNewer(_ revision: Int64, for id: String) -> Bool {
        revision > (byDonation[id] ?? 0)
    }

    /// Records that `revision` of `id` was applied; `ended` when the donation is now over or deleted.
    mutating func record(_ revision: Int64, for id: String, ended isOver: Bool, now: Int64) {
        byDonation[id] = revision
        highest = max(highest, revision)
        if isOver { ended.append((id, revision, now)) }
        seen(revision)
    }

    /// Notes that `revision` was seen (applied, or found older than what was applied).
    mutating func seen(_ revision: Int64) {
        guard revision > complete else { return }
        seenAbove.insert(revision)
        while seenAbove.remove(complete + 1) != nil { complete += 1 }
    }

    /// Whether a revision below `revision` was not seen: with revisions committed in order, one the bus did
    /// not bring (or that was never committed; only the store can tell).
    func hasGap(below revision: Int64) -> Bool {
        complete + 1 < revision
    }

    /// Notes that every revision up to `revision` is accounted for (a store read at or after its commit).
    mutating func accounted(through revision: Int64) {
        guard revision > complete else { return }
        complete = revision
        seenAbove = seenAbove.filter { $0 > revision }
        while seenAbove.remove(complete + 1) != nil { complete += 1 }
    }

    /// Raises the high-water mark to a snapshot's revision: every revision up to it is in the snapshot.
    mutating func loaded(upTo revision: Int64) {
        highest = max(highest, revision)
        accounted(through: revision)
    }

    /// Forgets ended donations older than the retention, unless changed again since.
    mutating func prune(now: Int64) {
        while let first = ended.first, now - first.at > Self.retentionMilliseconds {
            ended.removeFirst()
            if byDonation[first.id] == first.revision { byDonation.removeValue(forKey: first.id) }
        }
    }
}
