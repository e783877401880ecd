import BrokerProtocol

/// The numbering one donation's donor sees: the seqs of the positions kept for that donation, one after the other,
/// and nothing else. A seq counts neither the fixes kept for another donation on the same channel nor those taken
/// during a pause, so the numbers a donor receives tell it nothing beyond its own trackable windows.
///
/// Every counter of a node starts at the same number, taken from the clock when the node's hub starts
/// (milliseconds × 1000): a node started again never hands out a number lower than one it handed out before, and
/// donations that have seen the same positions carry the same number, so one frame serves all their watchers. In a
/// cluster the node that keeps a position numbers it, and every node that hears of it moves its own counter past
/// that number.
final class ViewCounter {
    private(set) var next: Int64

    init(start: Int64) {
        next = start
    }

    /// Hands out the next number of this view.
    func advance() {
        next += 1
    }

    /// Takes back the number ``advance()`` just handed out, before anybody saw it.
    func takeBack() {
        next -= 1
    }

    /// Notes that `seq` was handed out for this view elsewhere (another node): later numbers follow it.
    func passed(_ seq: Int64) {
        next = max(next, seq + 1)
    }
}

/// A kept position as the donors of `donations` see it: under `seq` in their views (``ViewCounter``), in the
/// `position` frame that carries it, encoded once for every watcher of those donations.
struct KeptView {
    let seq: Int64
    let frame: PreparedFrame
    var donations: [String]
}

/// A position kept for `last` and `since`, with the donations that were trackable when it was kept, grouped by the
/// number their views gave it: only their donors may ever receive it, each under its own view's seq.
///
/// The first group is held apart from the others so that the usual position, numbered alike for every donation it
/// was kept for, allocates no list.
struct KeptEntry {
    /// The channel's own order of its kept positions, for the cluster's bus and store: never shown to a donor.
    let seq: Int64
    let position: Position
    private(set) var first: KeptView
    private(set) var others: [KeptView]

    init(seq: Int64, position: Position, views first: KeptView, _ others: [KeptView] = []) {
        self.seq = seq
        self.position = position
        self.first = first
        self.others = others
    }

    /// The view of `donation`, when the position was kept for it.
    func view(for donation: String) -> KeptView? {
        if first.donations.contains(donation) { return first }
        return others.first { $0.donations.contains(donation) }
    }

    /// Every group, the first one first.
    var views: [KeptView] { [first] + others }

    /// Forgets `donation`.
    /// - Returns: whether the position is still kept for some donation.
    mutating func forget(_ donation: String) -> Bool {
        for index in others.indices { others[index].donations.removeAll { $0 == donation } }
        others.removeAll { $0.donations.isEmpty }
        first.donations.removeAll { $0 == donation }
        guard first.donations.isEmpty else { return true }
        guard !others.isEmpty else { return false }
        first = others.removeFirst()
        return true
    }
}
