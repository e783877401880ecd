import DequeModule

/// The store revision of each donation change a hub applied, so a change arriving late (over the cluster bus,
/// after a newer one) is ignored instead of undoing the newer one.
///
/// Entries of ended donations are forgotten after ``retentionMilliseconds``: by then no older change of
/// theirs can still be in flight, and the map does not grow with every donation ever made.
struct AppliedRevisions: Sendable {
    private(set) var byDonation: [String: Int64] = [:]
    /// The highest revision applied or loaded.
    private(set) var highest: Int64 = 0
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
    }

    /// Raises the high-water mark to a snapshot's revision.
    mutating func loaded(upTo revision: Int64) {
        highest = max(highest, revision)
    }

    /// Forgets ended donations older than the retention, unless changed again since.
    mutating func prune(now: Int64) {
        while let first = ended.first, now - first.at > Self.retentionMilliseconds {
            ended.removeFirst()
            if byDonation[first.id] == first.revision { byDonation.removeValue(forKey: first.id) }
        }
    }
}
