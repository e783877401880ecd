import BrokerProtocol
import DequeModule
import NIOCore

/// What the hub knows of one donation whose volunteer owns the channel.
struct DonationGate {
    let id: String
    let donor: String
    private(set) var state: DonationState
    var home: Home
    var institution: Institution?
    /// The distance in metres of the position that arrived at the current destination, once one did.
    var arrival: Double?
    /// When the donation last became trackable on this node (milliseconds since the Unix epoch, the hub's
    /// clock); `nil` while it is not trackable. Only fixes taken since then may reach its donor: a pause
    /// (`PICKED-BY-VOLUNTEER`, `DELIVERED-BY-DONOR`) ends the window, and resuming opens a new one.
    private(set) var trackableSince: Int64?
    /// The donation's incarnation, which a watch link must name (see ``WatchScope``).
    var incarnation: String?
    /// The seqs its donor sees. Shared by every copy of the gate: numbering a position changes no gate.
    let view: ViewCounter

    /// - Parameter viewStart: the number the donation's view starts from (``ViewCounter``).
    init(_ donation: Donation, now: Int64, viewStart: Int64) {
        id = donation.id
        donor = donation.donor
        incarnation = donation.incarnation
        state = donation.state
        home = donation.home
        institution = donation.institution
        trackableSince = donation.state.isTrackable ? now : nil
        view = ViewCounter(start: viewStart)
    }

    /// Moves the gate to `new`, opening a trackable window at `now` when it becomes trackable and closing it
    /// when it stops being trackable. A move between two trackable states keeps the window open.
    mutating func move(to new: DonationState, now: Int64) {
        if new.isTrackable {
            if trackableSince == nil { trackableSince = now }
        } else {
            trackableSince = nil
        }
        state = new
    }

    /// Whether both head for the same destination at the same coordinates (so an arrival still holds).
    func headsForTheSamePlace(as other: DonationGate) -> Bool {
        guard state.destination == other.state.destination else { return false }
        switch (destinationCoordinates, other.destinationCoordinates) {
        case (let mine?, let theirs?): return mine.lat == theirs.lat && mine.lon == theirs.lon
        case (nil, nil): return true
        default: return false
        }
    }

    /// The coordinates of the current destination, while trackable.
    var destinationCoordinates: (lat: Double, lon: Double)? {
        switch state.destination {
        case .home: (home.lat, home.lon)
        case .institution: institution.map { ($0.lat, $0.lon) }
        case nil: nil
        }
    }
}

extension Deque<KeptEntry> {
    /// Appends `entry`, then drops the oldest entry if more than `limit` are kept: in one mutating call, so a
    /// publish makes one access to its channel's history instead of three (the append, the count, the removal),
    /// each of which pays the runtime's dynamic exclusivity check on the publish path.
    mutating func keep(_ entry: KeptEntry, limit: Int) {
        append(entry)
        if count > limit { removeFirst() }
    }

    /// Drops the oldest entry if more than `count` are kept, and gives back its frame's storage (nothing else
    /// holds the entry any more) for the next frame to be written into.
    mutating func dropOldest(toKeep count: Int) -> ByteBuffer? {
        guard self.count > Swift.max(count, 0) else { return nil }
        return removeFirst().first.frame.bytes
    }
}

/// A connection watching the channel, and the donation that allows it.
struct Subscriber {
    let connection: ClientConnection
    let donation: String
}

/// The state of one volunteer's channel. Touched only under its shard's lock.
final class VolunteerChannel {
    let name: String
    var nextSeq: Int64
    /// Donations that have not ended and whose volunteer is this channel.
    var donations: [String: DonationGate] = [:] {
        // Every publish reads what follows from the gates; it is worked out again only when a gate changes.
        didSet {
            trackableCache = nil
            arrivalWatchCache = nil
        }
    }
    private var trackableCache: Trackable?
    private var arrivalWatchCache: [ArrivalWatch]?
    /// Subscribers by connection id. Changed only through ``addSubscriber(_:)`` and ``removeSubscriber(_:)``.
    private(set) var subscribers: [UInt64: Subscriber] = [:]
    /// The same subscribers grouped by the donation that allows them: a publish visits the watchers of the
    /// trackable donations directly, instead of comparing donation ids for every subscriber.
    private(set) var subscribersByDonation: [String: [UInt64: ClientConnection]] = [:]
    /// The connections the last fan-out reached and the donations it was for (``watchers(of:)``); forgotten when a
    /// subscriber comes or goes.
    private var watchersCache: (donations: [String], connections: [ClientConnection])?
    var history = Deque<KeptEntry>()
    /// Open connections of the volunteer.
    var connections = 0
    var online = false
    /// When the volunteer last published, in milliseconds since the Unix epoch.
    var lastSeen: Int64?
    var bucket: TokenBucket
    /// What the events have told of this volunteer's trips on this node; made only when events are on, so a
    /// channel without them pays one word.
    var trip: TripState?

    /// The channel's own seqs (``KeptEntry/seq``) start from the clock (microsecond-scale) so that a channel made
    /// again, even after a restart, never hands out a seq lower than one it handed out before.
    init(name: String, settings: HubSettings, now: Int64) {
        self.name = name
        self.nextSeq = max(1, now) * 1000
        self.bucket = TokenBucket(rate: settings.publishRate, burst: settings.publishBurst, now: now)
    }

    /// Subscribes `subscriber`'s connection, replacing an earlier subscription of the same connection.
    func addSubscriber(_ subscriber: Subscriber) {
        let id = subscriber.connection.id
        removeSubscriber(id)
        watchersCache = nil
        subscribers[id] = subscriber
        subscribersByDonation[subscriber.donation, default: [:]][id] = subscriber.connection
    }

    /// Ends the subscription of connection `id`, if any.
    @discardableResult
    func removeSubscriber(_ id: UInt64) -> Subscriber? {
        guard let removed = subscribers.removeValue(forKey: id) else { return nil }
        watchersCache = nil
        subscribersByDonation[removed.donation]?.removeValue(forKey: id)
        if subscribersByDonation[removed.donation]?.isEmpty == true { subscribersByDonation.removeValue(forKey: removed.donation) }
        return removed
    }

    /// The connections watching the donations in `donations`: the first donation's watchers, then the second's,
    /// and so on. Kept from one call to the next until a subscriber comes or goes, so a publish, which passes the
    /// same cached ``Trackable/ids`` each time (which `==` finds equal by its storage before comparing any element),
    /// hashes no donation id on the hot path. Other donations than the cached ones make the list again.
    func watchers(of donations: [String]) -> [ClientConnection] {
        if let cached = watchersCache, cached.donations == donations { return cached.connections }
        var connections: [ClientConnection] = []
        for donation in donations {
            guard let watchers = subscribersByDonation[donation] else { continue }
            connections.append(contentsOf: watchers.values)
        }
        watchersCache = (donations, connections)
        return connections
    }

    /// Whether nothing refers to the channel any more, so it can be forgotten: no donation, subscriber,
    /// connection or kept position, and a publish rate limit that has refilled by `now` (forgetting a
    /// half-empty bucket would hand a volunteer publishing over HTTP a fresh burst on every request).
    func isUnused(now: @autoclosure () -> Int64) -> Bool {
        donations.isEmpty && subscribers.isEmpty && connections == 0 && history.isEmpty && bucket.isFull(now: now())
    }

    /// A donation trackable now, and when its window opened.
    struct TrackableWindow {
        var id: String
        var since: Int64
    }

    /// The donations trackable now: their windows, their ids and view counters (in the same order), and when the
    /// latest window opened, so that a fix taken after every opening (the usual case) is kept for all of them
    /// without building a list or looking a gate up.
    struct Trackable {
        var windows: [TrackableWindow]
        var ids: [String]
        var views: [ViewCounter]
        var latestOpening: Int64
    }

    /// The donations trackable now, worked out again only when a gate changes.
    var trackable: Trackable {
        if let cached = trackableCache { return cached }
        let gates = donations.values.filter { $0.trackableSince != nil }
        let windows = gates.map { TrackableWindow(id: $0.id, since: $0.trackableSince ?? .min) }
        let made = Trackable(windows: windows, ids: windows.map(\.id), views: gates.map(\.view), latestOpening: windows.map(\.since).max() ?? .min)
        trackableCache = made
        return made
    }

    /// The view counters of `donations`, in their order. Every donation a position is kept for has its gate here
    /// (admission reads it); one that had none would get a counter of its own, used once.
    func viewCounters(of donations: [String]) -> [ViewCounter] {
        let trackable = self.trackable
        // The usual call passes the cached ids themselves, which `==` finds equal by their storage.
        if donations == trackable.ids { return trackable.views }
        return donations.map { self.donations[$0]?.view ?? ViewCounter(start: 0) }
    }

    /// Whether `donation` is trackable now and a fix taken at `timestamp` falls inside its window, give or
    /// take `tolerance` milliseconds of a phone clock running behind.
    func admits(_ donation: String, takenAt timestamp: Int64, tolerance: Int64) -> Bool {
        guard let since = donations[donation]?.trackableSince else { return false }
        return timestamp >= since - tolerance
    }

    /// A trackable donation whose volunteer has not yet arrived at its current destination.
    struct ArrivalWatch {
        var lat: Double
        var lon: Double
        var id: String
    }

    /// The trackable donations still waiting for an arrival, with their destination's coordinates.
    var arrivalWatch: [ArrivalWatch] {
        if let cached = arrivalWatchCache { return cached }
        let watch = donations.values.compactMap { gate -> ArrivalWatch? in
            guard gate.state.isTrackable, gate.arrival == nil, let target = gate.destinationCoordinates else { return nil }
            return ArrivalWatch(lat: target.lat, lon: target.lon, id: gate.id)
        }
        arrivalWatchCache = watch
        return watch
    }

    /// Forgets that `donation` may see kept positions; positions nobody may see any more are dropped.
    func purgeHistory(of donation: String) {
        guard !history.isEmpty else { return }
        var kept = Deque<KeptEntry>()
        for var entry in history where entry.forget(donation) {
            kept.append(entry)
        }
        history = kept
    }
}
