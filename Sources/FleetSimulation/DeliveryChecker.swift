import BrokerProtocol

/// A donor's check of what the broker delivers for one donation, as a value fed with the frames in order.
///
/// It finds positions outside a subscription or during a pause, seqs that go backwards or skip, arrivals for the
/// wrong place or too far from it, an unexpected end, and (in ``finish(windows:kept:reached:)``) positions
/// whose fix was taken outside the donation's trackable windows and kept positions that never arrived.
public struct DeliveryChecker: Sendable {
    /// One thing the broker got wrong, worded for the summary.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        public enum Kind: String, Sendable {
            case gap, duplicate, outsideSubscription = "outside-subscription", whilePaused = "while-paused"
            case outsideWindow = "outside-window", arrival, lost, end
        }

        public var kind: Kind
        public var detail: String

        public var description: String { "\(kind.rawValue): \(detail)" }
    }

    /// A time span in milliseconds since the epoch during which the donation was trackable: from the `PUT` that
    /// entered a trackable state being sent (`start`) to the answer of the `PUT` that left it (`end`, `nil` while
    /// open). `endSent` is when that last `PUT` was sent: the broker forgot the window's positions in between.
    public struct Window: Sendable, Equatable {
        public var start: Int64
        public var end: Int64?
        public var endSent: Int64?

        public init(start: Int64, end: Int64?, endSent: Int64? = nil) {
            self.start = start
            self.end = end
            self.endSent = endSent
        }

        public func contains(_ time: Int64) -> Bool { time >= start && end.map { time <= $0 } ?? true }
    }

    /// A position the broker acknowledged as kept, by the fix's timestamp (the donor's seqs are numbered in its
    /// own view, not the volunteer's), and the index of the window it was kept in.
    public struct Kept: Sendable, Equatable {
        public var timestamp: Int64
        public var window: Int

        public init(timestamp: Int64, window: Int) {
            self.timestamp = timestamp
            self.window = window
        }
    }

    public let donation: String
    /// The end reasons this donation may have (its fate's, and `deleted` when the run is stopped).
    public let allowedEnds: Set<ServerFrame.UnsubscribeReason>
    public let arrivalRadius: Double

    public private(set) var problems: [Problem] = []
    /// The highest seq seen, for `since` after a reconnect.
    public private(set) var maxSeq: Int64?
    public private(set) var received = 0
    public private(set) var subscribed = false
    public private(set) var tracking = false
    public private(set) var destination: Destination?
    public private(set) var endReason: ServerFrame.UnsubscribeReason?
    public private(set) var arrivals: Set<Destination> = []
    /// Whether the donor was subscribed when the trip paused at the door (so it must have had the home arrival).
    public private(set) var sawPause = false
    private var timestamps: [(seq: Int64, timestamp: Int64)] = []
    private var lastPosition: Position?
    /// Whether the frame just before was a live position (not a `since` backlog one).
    private var lastFrameWasLivePosition = false
    /// In a resumed subscription, the seqs up to this one are backlog.
    private var backlogUpTo: Int64?
    /// Whether the connection dropped since the last position: a seq may then jump over a pause.
    private var interrupted = false
    /// When the donor was away, in milliseconds since the epoch: from the drop to the next `subscribed`.
    private var outages: [(from: Int64, to: Int64?)] = []

    public init(donation: String, allowedEnds: Set<ServerFrame.UnsubscribeReason>, arrivalRadius: Double = 150) {
        self.donation = donation
        self.allowedEnds = allowedEnds
        self.arrivalRadius = arrivalRadius
    }

    private mutating func report(_ kind: Problem.Kind, _ detail: String) {
        if problems.count < 50 { problems.append(Problem(kind: kind, detail: "\(donation): \(detail)")) }
    }

    /// The broker granted the subscription at `time` (ms). `resumed` is true when it was asked with `since`.
    public mutating func subscribed(_ frame: ServerFrame.Subscribed, resumed: Bool, at time: Int64) {
        subscribed = true
        tracking = frame.tracking
        destination = frame.destination
        lastFrameWasLivePosition = false
        backlogUpTo = resumed ? frame.last?.seq : nil
        if let open = outages.indices.last, outages[open].to == nil { outages[open].to = time }
        // Without `since`, `last` is the only kept position given: it counts as delivered.
        if !resumed, let last = frame.last, maxSeq.map({ last.seq > $0 }) ?? true {
            accept(seq: last.seq, position: last.position)
        }
    }

    /// A live or backlog position.
    /// - Returns: whether it was a live position that counts as delivered now (for latency).
    @discardableResult
    public mutating func position(_ frame: ServerFrame.PositionUpdate) -> Bool {
        lastFrameWasLivePosition = false
        guard subscribed else {
            report(.outsideSubscription, "position seq \(frame.seq) arrived while not subscribed")
            return false
        }
        guard tracking else {
            report(.whilePaused, "position seq \(frame.seq) arrived while tracking was paused")
            return false
        }
        if let maxSeq {
            if frame.seq <= maxSeq {
                report(.duplicate, "seq \(frame.seq) arrived after seq \(maxSeq)")
                return false
            }
            // After a drop, positions of a window that ended meanwhile are gone: finish() judges those.
            if frame.seq > maxSeq + 1 && !interrupted { report(.gap, "seq jumped from \(maxSeq) to \(frame.seq)") }
        }
        interrupted = false
        accept(seq: frame.seq, position: frame.position)
        let live = backlogUpTo.map { frame.seq > $0 } ?? true
        lastFrameWasLivePosition = live
        return live
    }

    private mutating func accept(seq: Int64, position: Position) {
        maxSeq = seq
        received += 1
        if timestamps.count < 100_000 { timestamps.append((seq, position.timestamp)) }
        lastPosition = position
    }

    /// The donation moved between non-final states.
    public mutating func state(_ frame: ServerFrame.StateChange) {
        lastFrameWasLivePosition = false
        if tracking && !frame.tracking && (frame.state == .pickedByVolunteer || frame.state == .deliveredByDonor) { sawPause = true }
        tracking = frame.tracking
        destination = frame.destination
    }

    /// An arrival; `place` is where the sim knows the destination to be.
    public mutating func arrival(_ frame: ServerFrame.Arrival, place: GeoPoint) {
        defer { lastFrameWasLivePosition = false }
        guard subscribed else { return report(.outsideSubscription, "arrival at \(frame.place.rawValue) while not subscribed") }
        guard frame.place == destination else {
            return report(.arrival, "arrival at \(frame.place.rawValue) while heading to \(destination?.rawValue ?? "nowhere")")
        }
        guard frame.distance <= arrivalRadius + 0.05 else {
            return report(.arrival, "arrival at \(frame.place.rawValue) reported \(frame.distance) m away (radius \(arrivalRadius) m)")
        }
        // A live arrival follows the position that caused it; one replayed after `subscribed` need not.
        if lastFrameWasLivePosition, let last = lastPosition {
            let distance = GeoPoint(lat: last.lat, lon: last.lon).distance(to: place)
            if abs(distance - frame.distance) > 1 {
                report(.arrival, "arrival at \(frame.place.rawValue) says \(frame.distance) m but the position before it is \(Int(distance)) m away")
            }
        }
        arrivals.insert(frame.place)
    }

    /// The subscription ended.
    public mutating func unsubscribed(_ reason: ServerFrame.UnsubscribeReason) {
        subscribed = false
        lastFrameWasLivePosition = false
        endReason = reason
        if !allowedEnds.contains(reason) {
            report(.end, "tracking ended with \(reason.rawValue), expected \(allowedEnds.map(\.rawValue).sorted().joined(separator: " or "))")
        }
    }

    /// The connection dropped at `time` (ms): the subscription is gone until the donor subscribes again.
    public mutating func disconnected(at time: Int64) {
        if outages.last.map({ $0.to != nil }) ?? true { outages.append((time, nil)) }
        subscribed = false
        interrupted = true
        lastFrameWasLivePosition = false
    }

    /// Final checks against what the volunteer side knows.
    /// - Parameters:
    ///   - windows: when the donation was trackable, in order.
    ///   - kept: the positions the broker acknowledged as kept for this donation.
    ///   - reached: the destinations the volunteer reached with a kept fix inside the arrival radius.
    public mutating func finish(windows: [Window], kept: [Kept], reached: Set<Destination>) {
        for (seq, timestamp) in timestamps where !windows.contains(where: { $0.contains(timestamp) }) {
            report(.outsideWindow, "seq \(seq) was taken at \(timestamp), outside the trackable windows")
        }
        if sawPause && reached.contains(.home) && !arrivals.contains(.home) {
            report(.arrival, "the volunteer reached the home but no arrival came")
        }
        if endReason == .delivered && reached.contains(.institution) && !arrivals.contains(.institution) {
            report(.arrival, "delivered without an arrival at the institution")
        }
        guard let first = timestamps.first, let newest = timestamps.last else { return }
        // Every position kept after the first one seen must arrive, up to the last seen unless the end was seen
        // live; except those of a window that closed while the donor was away (the broker forgets them).
        let upper = endReason == nil ? newest.timestamp : Int64.max
        let got = Set(timestamps.map(\.timestamp))
        let missing = kept.filter { position in
            guard position.timestamp >= first.timestamp, position.timestamp <= upper, !got.contains(position.timestamp) else { return false }
            return !closedWhileAway(windows.indices.contains(position.window) ? windows[position.window] : nil)
        }
        if let first = missing.first {
            report(.lost, "\(missing.count) kept position(s) never arrived (the first taken at \(first.timestamp))")
        }
        lostCount = missing.count
    }

    /// Whether the donor was away at some moment while `window` was closing.
    private func closedWhileAway(_ window: Window?) -> Bool {
        guard let window, let end = window.end else { return false }
        let closing = (window.endSent ?? end)...end
        return outages.contains { outage in
            let away = outage.from...(outage.to ?? Int64.max)
            return away.overlaps(closing)
        }
    }

    /// Kept positions that never arrived, set by ``finish(windows:kept:reached:)``.
    public private(set) var lostCount = 0
}
