import BrokerProtocol
import Foundation
import Logging
import NIOCore
import Synchronization

/// The in-process registry of channels, subscriptions and donation gates, and the publish -> fan-out path.
///
/// Channels live in 64 shards, each a mutex over a dictionary, so volunteers on different shards never
/// contend. A publish takes its channel's shard lock once, encodes the position once, and pushes the same
/// bytes into each allowed subscriber's bounded outbox without waiting for anyone.
///
/// Lock order (see docs/OPERATIONS.md): shard lock, then a connection's lock, then an outbox's lock.
/// `donationRevisions` comes before every shard lock. `donationIndex` and `connections` are leaves, never held while taking another lock.
final class Hub: Sendable {
    private final class Shard: Sendable {
        let channels = Mutex<[String: VolunteerChannel]>([:])
    }

    private let shards: [Shard]
    /// Donation id -> the volunteer channel it gates, for `subscribe` by donation.
    private let donationIndex = Mutex<[String: String]>([:])
    private let connections = Mutex<[UInt64: ClientConnection]>([:])
    /// The store revision of each donation change applied, so an older change arriving late is ignored.
    /// Taken before any shard lock, never inside one.
    let donationRevisions = Mutex(AppliedRevisions())
    private let nextConnectionID = Atomic<UInt64>(1)
    let settings: HubSettings
    let metrics: BrokerMetrics
    /// Milliseconds since the Unix epoch.
    let clock: @Sendable () -> Int64
    /// Where positions and presence go for the other nodes of a cluster; `nil` on a single node, which then
    /// pays nothing for clustering.
    let cluster: ClusterOutbox?

    static func systemClock() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    init(
        settings: HubSettings, metrics: BrokerMetrics, cluster: ClusterOutbox? = nil,
        clock: @escaping @Sendable () -> Int64 = Hub.systemClock
    ) {
        self.shards = (0..<64).map { _ in Shard() }
        self.settings = settings
        self.metrics = metrics
        self.cluster = cluster
        self.clock = clock
    }

    private func shard(_ channel: String) -> Shard {
        var hasher = Hasher()
        hasher.combine(channel)
        return shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(shards.count))]
    }

    /// Runs `body` on the channel under its shard's lock, creating the channel when asked, and forgets the
    /// channel afterwards if nothing refers to it any more.
    func locked<T: Sendable>(_ name: String, create: Bool, _ body: (VolunteerChannel?) -> T) -> T {
        shard(name).channels.withLock { channels in
            var channel = channels[name]
            if channel == nil && create {
                let made = VolunteerChannel(name: name, settings: settings, now: clock())
                channels[name] = made
                channel = made
            }
            let result = body(channel)
            if let channel, channel.isUnused(now: clock()) { channels.removeValue(forKey: name) }
            return result
        }
    }

    // MARK: Connections

    /// Makes the hub's record of a newly upgraded WebSocket and counts it open.
    func connect(_ identity: VerifiedIdentity, logger: Logger) -> ClientConnection {
        let id = nextConnectionID.wrappingAdd(1, ordering: .relaxed).oldValue
        let connection = ClientConnection(
            id: id, identity: identity.identity, expiresAt: identity.expiresAt, watch: identity.watch, outboxLimit: settings.outboxBytes,
            stallLimit: settings.slowConsumerStall, logger: logger)
        connections.withLock { $0[id] = connection }
        let admitted = locked(identity.identity, create: true) { channel -> Bool in
            guard let channel else { return false }
            channel.connections += 1
            return channel.connections <= settings.maxConnectionsPerIdentity
        }
        metrics.connections.increment()
        if admitted { metrics.connectionsAccepted.increment() }
        if !admitted {
            // Two upgrades raced past the check at the handshake; the later one is closed at once.
            metrics.reject(.limitReached)
            connection.outbox.close(
                code: CloseCode.tooManyConnections, reason: "too many connections for this identity", discardPending: true)
        }
        return connection
    }

    /// Whether `identity` may open another WebSocket now.
    func mayConnect(_ identity: String) -> Bool {
        locked(identity, create: false) { ($0?.connections ?? 0) < settings.maxConnectionsPerIdentity }
    }

    /// Forgets a closed connection: its subscriptions end, and the volunteer goes offline with their last connection.
    func disconnect(_ connection: ClientConnection) {
        guard connections.withLock({ $0.removeValue(forKey: connection.id) }) != nil else { return }
        connection.outbox.finish()
        for channelName in connection.subscribedChannels {
            locked(channelName, create: false) { channel in
                _ = channel?.removeSubscriber(connection.id)
            }
        }
        locked(connection.identity, create: false) { channel in
            guard let channel else { return }
            channel.connections -= 1
            if channel.connections == 0 && channel.online {
                channel.online = false
                notifyPresence(channel)
                cluster?.announceOffline(channel: channel.name, lastSeen: channel.lastSeen)
            }
        }
        metrics.connections.decrement()
    }

    /// Open connections.
    var connectionCount: Int { connections.withLock { $0.count } }

    /// Which channels ``channelNames(_:)`` lists.
    enum ChannelFilter: Sendable {
        /// Channels with a subscriber on this node.
        case subscribed
        /// Channels with a donation gate (a donation active on this node).
        case gated
    }

    /// The names of the channels held in memory that pass `filter`, each read under its shard's lock.
    func channelNames(_ filter: ChannelFilter) -> [String] {
        var names: [String] = []
        for shard in shards {
            names += shard.channels.withLock { channels -> [String] in
                var found: [String] = []
                for (name, channel) in channels {
                    switch filter {
                    case .subscribed: if !channel.subscribers.isEmpty { found.append(name) }
                    case .gated: if !channel.donations.isEmpty { found.append(name) }
                    }
                }
                return found
            }
        }
        return names
    }

    /// Whether the connection `id` is still open.
    func isConnected(_ id: UInt64) -> Bool { connections.withLock { $0[id] != nil } }

    /// Channels held in memory, for operations and tests.
    var channelCount: Int { shards.reduce(0) { $0 + $1.channels.withLock { $0.count } } }

    /// The bytes queued in the fullest outbox, for operations and tests.
    var largestOutboxBytes: Int {
        connections.withLock { Array($0.values) }.map(\.outbox.queuedBytes).max() ?? 0
    }

    /// Asks every connection to close with `code`, after the frames already queued.
    func closeAll(code: UInt16, reason: String) {
        for connection in connections.withLock({ Array($0.values) }) {
            connection.outbox.close(code: code, reason: reason, discardPending: false)
        }
    }

    /// Closes with 4001 every connection whose token has expired (tokens are accepted up to the verifier's
    /// leeway after `exp`, so sockets live exactly as long). Run once a second by ``PresenceSweeper``: one sweep
    /// costs less than a sleeping task per connection.
    func closeExpiredConnections() {
        let now = clock() / 1000
        for connection in connections.withLock({ Array($0.values) }) where connection.expiresAt + TokenVerifier.leewaySeconds <= now {
            connection.outbox.close(code: CloseCode.tokenExpired, reason: "token expired", discardPending: false)
        }
    }

    /// Cuts every socket still open, without a close handshake (the end of the shutdown grace).
    func abortAll() {
        for connection in connections.withLock({ Array($0.values) }) {
            connection.outbox.abort()
        }
    }

    // MARK: Publish

    /// What became of a published position.
    struct PublishOutcome: Sendable, Equatable {
        /// The seq it was kept under, or `nil` when it was kept for nobody.
        var seq: Int64?
        var watchers: Int
        /// Why it was kept for nobody, when it was.
        var untracked: ServerFrame.UntrackedReason?
        var tracking: Bool { seq != nil }
    }

    /// Publishes a validated position on `identity`'s own channel: from its WebSocket, or over HTTP (OwnTracks).
    /// Nothing of the sender but its identity plays a part, so a publish over HTTP counts as no open socket.
    func publish(as identity: String, position: Position) -> Result<PublishOutcome, BrokerError> {
        let now = clock()
        return locked(identity, create: true) { channel -> Result<PublishOutcome, BrokerError> in
            guard let channel else { return .failure(BrokerError(.internal, "channel unavailable")) }
            guard channel.bucket.take(now: now) else {
                return .failure(BrokerError(.rateLimited, "publishing faster than \(settings.publishRate) positions per second (burst \(settings.publishBurst)); slow down"))
            }
            channel.lastSeen = now
            if !channel.online {
                channel.online = true
                notifyPresence(channel)
            }
            let admission = admit(position, in: channel, now: now)
            guard case .admitted(let trackable) = admission else {
                if case .untracked(let reason) = admission { metrics.positionsUntracked[reason]?.increment() }
                return .success(PublishOutcome(seq: nil, watchers: 0, untracked: admission.reason))
            }
            let seq = channel.nextSeq
            let watchers = keep(position, seq: seq, in: channel, for: trackable)
            cluster?.announcePosition(channel: channel.name, seq: seq, position: position, donations: trackable, seenAt: now)
            return .success(PublishOutcome(seq: seq, watchers: watchers))
        }
    }

    /// For which donations a fix may be kept: judged by when it was taken, not when it arrived.
    enum Admission: Equatable {
        case admitted([String])
        case untracked(ServerFrame.UntrackedReason)

        var reason: ServerFrame.UntrackedReason? {
            if case .untracked(let reason) = self { reason } else { nil }
        }
    }

    /// Decides for which trackable donations `position` may be kept: those whose current trackable window
    /// opened no later than the fix was taken (give or take the clock tolerance), and none at all when the fix
    /// is older than the maximum age. A fix queued on a phone before BEING-LOOKED-FOR, or taken during a pause
    /// and sent after it, thus reaches nobody.
    func admit(_ position: Position, in channel: VolunteerChannel, now: Int64) -> Admission {
        let trackable = channel.trackable
        guard !trackable.ids.isEmpty else { return .untracked(.noTrackableDonation) }
        guard now - position.timestamp <= settings.maxPositionAgeMilliseconds else { return .untracked(.tooOld) }
        let takenAtLatest = position.timestamp + settings.windowToleranceMilliseconds
        // Taken after every window opened: kept for all, with the cached ids (no list built per publish).
        if takenAtLatest >= trackable.latestOpening { return .admitted(trackable.ids) }
        let admitted = trackable.windows.compactMap { takenAtLatest >= $0.since ? $0.id : nil }
        return admitted.isEmpty ? .untracked(.beforeWindow) : .admitted(admitted)
    }

    /// Keeps `position` under `seq` for the donations in `trackable`, hands the same encoded bytes to each of
    /// their subscribers, and announces arrivals. Runs under the channel's shard lock.
    /// - Returns: the subscribers it was queued for.
    func keep(_ position: Position, seq: Int64, in channel: VolunteerChannel, for trackable: [String]) -> Int {
        channel.nextSeq = max(channel.nextSeq, seq + 1)
        let frame = TextFrame.framed(PositionFrameEncoder.encode(channel: channel.name, seq: seq, position: position))
        channel.history.append(KeptEntry(seq: seq, position: position, frame: frame, donations: trackable))
        if channel.history.count > settings.historySize { channel.history.removeFirst() }
        var watchers = 0
        for donation in trackable {
            guard let connections = channel.subscribersByDonation[donation] else { continue }
            for connection in connections.values {
                let result = connection.outbox.push(frame, positionChannel: channel.name)
                metrics.record(result)
                if result == .queued || result == .conflated { watchers += 1 }
            }
        }
        metrics.positionsKept.increment()
        metrics.deliveries.increment(by: Int64(watchers))
        announceArrivals(channel, position: position, among: trackable)
        return watchers
    }

    /// Sends `arrival` the first time a kept position comes within the radius of a donation's destination,
    /// for the donations in `trackable` only (the ones the position was kept for).
    private func announceArrivals(_ channel: VolunteerChannel, position: Position, among trackable: [String]) {
        let watch = channel.arrivalWatch
        // Only coordinates are read per donation; a gate is touched only when an arrival fires.
        for index in watch.indices {
            let distance = Geodesy.distance(fromLat: position.lat, lon: position.lon, toLat: watch[index].lat, lon: watch[index].lon)
            guard distance <= settings.arrivalRadiusMeters else { continue }
            let id = watch[index].id
            guard trackable.contains(id), var gate = channel.donations[id], let place = gate.state.destination else { continue }
            let rounded = (distance * 10).rounded() / 10
            gate.arrival = rounded
            channel.donations[id] = gate
            send(.arrival(.init(channel: channel.name, donation: id, place: place, distance: rounded)), in: channel, toDonation: id)
        }
    }

    // MARK: Presence

    /// Reports offline every volunteer silent for longer than the presence timeout, and forgets the channels
    /// kept only for their publish rate limit once it has refilled.
    func sweepPresence() {
        let now = clock()
        for shard in shards {
            shard.channels.withLock { channels in
                for channel in channels.values where channel.online {
                    if let seen = channel.lastSeen, now - seen > settings.presenceTimeoutMilliseconds {
                        channel.online = false
                        notifyPresence(channel)
                    }
                }
                for (name, channel) in channels where channel.isUnused(now: now) {
                    channels.removeValue(forKey: name)
                }
            }
        }
    }

    func notifyPresence(_ channel: VolunteerChannel) {
        guard !channel.subscribers.isEmpty else { return }
        let frame = Self.encode(.presence(.init(channel: channel.name, online: channel.online, lastSeen: channel.lastSeen)))
        for subscriber in channel.subscribers.values {
            metrics.record(subscriber.connection.outbox.push(frame))
        }
    }

    // MARK: Helpers shared by the extensions

    /// Encodes a non-position frame as a complete WebSocket text frame. Position frames go through
    /// ``PositionFrameEncoder`` instead.
    static func encode(_ frame: ServerFrame) -> ByteBuffer {
        do {
            return TextFrame.framed(try WireJSON.encode(frame))
        } catch {
            // Every server frame is plain data; a failure here is a programming error worth a loud frame.
            return TextFrame.framed(Array(#"{"type":"error","code":"internal","message":"the broker could not encode a frame"}"#.utf8))
        }
    }

    /// Encodes `frame` once and queues it for the subscribers of `channel` that watch `donation`.
    func send(_ frame: ServerFrame, in channel: VolunteerChannel, toDonation donation: String) {
        guard let watchers = channel.subscribersByDonation[donation], !watchers.isEmpty else { return }
        let bytes = Self.encode(frame)
        for connection in watchers.values {
            metrics.record(connection.outbox.push(bytes))
        }
    }

    /// Queues a frame for one connection.
    func reply(_ frame: ServerFrame, to connection: ClientConnection) {
        metrics.record(connection.outbox.push(Self.encode(frame)))
    }

    func channelName(ofDonation id: String) -> String? {
        donationIndex.withLock { $0[id] }
    }

    func setChannel(_ channel: String?, ofDonation id: String) {
        donationIndex.withLock { $0[id] = channel }
    }

}
