import BrokerProtocol

/// Keeps a position on its channel, for `last` and `since`, hands it to the subscribers of the donations it
/// was kept for, and announces arrivals. Called under the channel's shard lock, by a publish on this node and
/// by the cluster's receiving side alike, so a position reaches a donor by one path only.
struct PositionKeeper: Sendable {
    let settings: HubSettings
    let delivery: Delivery
    /// Decides trip events when the broker tells anyone of them; `nil` costs the publish path one check.
    let events: TripEventDetector?
    let clock: WallClock

    /// Keeps `position` under the channel's `seq` for the donations in `trackable` (never empty), numbers it in each
    /// donation's view (``ViewCounter``), and queues each view's frame for that donation's subscribers.
    /// - Parameter viewSeqs: the numbers the node that kept the position gave it, in the order of `trackable`;
    ///   `nil` to number it here.
    /// - Returns: the subscribers it was queued for.
    /// - Parameter counters: the view counters of `trackable`, in its order, when the caller has them at hand.
    func keep(
        _ position: Position, seq: Int64, in channel: VolunteerChannel, for trackable: [String], viewSeqs: [Int64]? = nil,
        counters: [ViewCounter]? = nil
    ) -> Int {
        channel.nextSeq = max(channel.nextSeq, seq + 1)
        let entry = numbered(position, seq: seq, in: channel, for: trackable, viewSeqs: viewSeqs, counters: counters)
        remember(entry, in: channel)
        let watchers = delivery.fanOut(entry, in: channel, to: trackable).delivered
        // The fix's own events come before the arrival it may make: the first position is told first.
        events?.fixKept(position, in: channel, for: trackable, now: clock.now())
        announceArrivals(channel, position: position, among: trackable)
        return watchers
    }

    /// Keeps `position` under `seq` for the donations in `donations` (never empty) without telling anyone (a node
    /// that starts takes in what the cluster stored).
    func seed(_ position: Position, seq: Int64, in channel: VolunteerChannel, for donations: [String], viewSeqs: [Int64]?) {
        remember(numbered(position, seq: seq, in: channel, for: donations, viewSeqs: viewSeqs, counters: nil), in: channel)
    }

    /// The kept entry of `position`: its donations numbered in their views and grouped by number, one frame per
    /// group. Donations whose views have seen the same positions (the usual case, and every donation of a channel
    /// that serves many at once) share one number and one frame. The first frame is written into the storage of the
    /// oldest kept frame when the history is full and is about to drop it (no buffer allocated and freed per
    /// publish). A queued frame that still shares that storage keeps its bytes: the framing gets fresh storage then
    /// (copy-on-write).
    private func numbered(
        _ position: Position, seq: Int64, in channel: VolunteerChannel, for donations: [String], viewSeqs: [Int64]?, counters given: [ViewCounter]?
    ) -> KeptEntry {
        let counters = given ?? channel.viewCounters(of: donations)
        var dropped = channel.history.dropOldest(toKeep: settings.historySize - 1)
        func frame(_ viewSeq: Int64) -> PreparedFrame {
            delivery.position(channel: channel.name, seq: viewSeq, position: position, reusing: &dropped)
        }
        if viewSeqs == nil, let common = Self.advanceAll(agreeing: counters) {
            return KeptEntry(seq: seq, position: position, views: KeptView(seq: common, frame: frame(common), donations: donations))
        }
        var groups: [KeptView] = []
        for index in donations.indices {
            let number: Int64
            if let viewSeqs, viewSeqs.indices.contains(index) {
                number = viewSeqs[index]
                counters[index].passed(number)
            } else {
                number = counters[index].next
                counters[index].advance()
            }
            if let group = groups.firstIndex(where: { $0.seq == number }) {
                groups[group].donations.append(donations[index])
            } else {
                groups.append(KeptView(seq: number, frame: frame(number), donations: [donations[index]]))
            }
        }
        let first = groups.removeFirst()
        return KeptEntry(seq: seq, position: position, views: first, groups)
    }

    /// Hands out the next number of every counter when they all agree on it, in one pass over them (a fan-out's
    /// thousand donations are walked once per publish); leaves every counter as it was when they do not.
    private static func advanceAll(agreeing counters: [ViewCounter]) -> Int64? {
        guard let next = counters.first?.next else { return nil }
        for index in counters.indices {
            guard counters[index].next == next else {
                for advanced in counters[..<index] { advanced.takeBack() }
                return nil
            }
            counters[index].advance()
        }
        return next
    }

    private func remember(_ entry: KeptEntry, in channel: VolunteerChannel) {
        channel.history.keep(entry, limit: settings.historySize)
    }

    /// Sends `arrival` the first time a kept position comes within the radius of a donation's destination,
    /// for the donations in `trackable` only (the ones the position was kept for).
    private func announceArrivals(_ channel: VolunteerChannel, position: Position, among trackable: [String]) {
        let watch = channel.arrivalWatch
        // A great circle is never shorter than its north-south part (haversine: `a >= sin²(Δφ/2)`), so a
        // destination whose latitude alone is farther than the radius is skipped without the trigonometry: with
        // many donations on one channel, the distances would otherwise dominate a fan-out. The margin
        // (about 0.1 mm) keeps rounding from ever skipping a destination inside the radius.
        let latitudeReach = settings.arrivalRadiusMeters / Geodesy.earthRadius * 180 / .pi + 1e-9
        // Only coordinates are read per donation; a gate is touched only when an arrival fires.
        for index in watch.indices {
            guard abs(watch[index].lat - position.lat) <= latitudeReach else { continue }
            let distance = Geodesy.distance(fromLat: position.lat, lon: position.lon, toLat: watch[index].lat, lon: watch[index].lon)
            guard distance <= settings.arrivalRadiusMeters else { continue }
            let id = watch[index].id
            guard trackable.contains(id), var gate = channel.donations[id], let place = gate.state.destination else { continue }
            let rounded = (distance * 10).rounded() / 10
            gate.arrival = rounded
            channel.donations[id] = gate
            events?.arrived(gate, in: channel, now: clock.now())
            delivery.send(.arrival(.init(channel: channel.name, donation: id, place: place, distance: rounded)), in: channel, toDonation: id)
        }
    }
}
