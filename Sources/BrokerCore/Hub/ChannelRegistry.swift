
/// The volunteer channels held in memory, in 64 shards, each a mutex over a dictionary (as centrifuge's
/// `hub.go`), so volunteers on different shards never contend. A channel is made when first needed and
/// forgotten as soon as nothing refers to it.
///
/// Lock order (docs/LOCK-ORDER.md): a shard lock is taken under `donationRevisions` or under nothing; under it
/// come only leaf locks (a connection's subscriptions, a sink's queue, the cluster outbox, the shard interest).
package final class ChannelRegistry: Sendable {
    private final class Shard: Sendable {
        let channels = LockedValue(ShardChannels())
    }

    // Unchecked: the channels, which are not Sendable, are reached only under their shard's lock.
    private struct ShardChannels: @unchecked Sendable {
        var byKey: [Key: VolunteerChannel] = [:]
    }

    /// A channel's name with its hash, computed once per look-up for both the shard and the shard's dictionary,
    /// instead of hashing the name twice, or once per connection for the channel it publishes on
    /// (``ClientConnection/channelHash``).
    ///
    /// Invariant: ``hash`` is always ``hash(of:)`` of ``name`` (checked in debug builds), so keys equal by name
    /// (``==``) carry equal hashes, and ``hash(into:)`` and ``_rawHashValue(seed:)``, functions of the hash alone,
    /// agree with ``==``. Channel names are identities: a channel is made for each identity that connects, anyone
    /// who can sign up picks theirs (an e-mail address), and clients name channels in their subscriptions, so an
    /// attacker can choose names. The hash is the standard library's, seeded at random per process, so names
    /// that collide (in a shard or a dictionary's buckets) cannot be worked out from outside; only a process run
    /// with `SWIFT_DETERMINISTIC_HASHING` set loses the seed.
    struct Key: Hashable {
        let name: String
        let hash: Int

        init(_ name: String) {
            self.init(name, hash: Self.hash(of: name))
        }

        /// `name` with its hash, as ``hash(of:)`` gave it.
        init(_ name: String, hash: Int) {
            assert(hash == Self.hash(of: name), "a channel key's hash is not its name's")
            self.name = name
            self.hash = hash
        }

        /// The hash a key for `name` carries: the standard library's seeded hash of the name (`name.hashValue`).
        static func hash(of name: String) -> Int {
            var hasher = Hasher()
            hasher.combine(name)
            return hasher.finalize()
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(hash)
        }

        /// What the shard's dictionary hashes with: the name's hash mixed with the dictionary's seed by a few
        /// multiplications and shifts (MurmurHash3's finalizer, a bijection whose low bits depend on every bit),
        /// instead of a second pass of the standard library's hasher over it, which would cost on every publish
        /// (docs/BENCHMARKS.md, "Decisions that shaped the hot path"); ``hash(into:)`` stays for any other hashing.
        /// Underscored, but it is `Hashable`'s own customization point: the standard library's collections call it
        /// and expect only that equal keys give equal values for a seed, which holds since it reads nothing but
        /// ``hash``. As the mix is a bijection, distinct name hashes stay distinct, so keys collide no more than
        /// the names' seeded hashes do, and the dictionary's seed still moves where a key lands from one
        /// dictionary to another.
        func _rawHashValue(seed: Int) -> Int {
            var mixed = UInt64(bitPattern: Int64(hash ^ seed))
            mixed ^= mixed >> 33
            mixed &*= 0xff51_afd7_ed55_8ccd
            mixed ^= mixed >> 33
            mixed &*= 0xc4ce_b9fe_1a85_ec53
            mixed ^= mixed >> 33
            return Int(truncatingIfNeeded: mixed)
        }

        static func == (left: Key, right: Key) -> Bool {
            left.name == right.name
        }
    }

    private let shards: [Shard]
    private let settings: HubSettings
    private let clock: WallClock

    init(settings: HubSettings, clock: WallClock) {
        self.shards = (0..<64).map { _ in Shard() }
        self.settings = settings
        self.clock = clock
    }

    private func shard(_ key: Key) -> Shard {
        shards[Int(UInt(bitPattern: key.hash) % UInt(shards.count))]
    }

    /// Runs `body` on the channel under its shard's lock, creating the channel when asked, and forgets the
    /// channel afterwards if nothing refers to it any more.
    func locked<T>(_ name: String, create: Bool, _ body: (VolunteerChannel?) -> T) -> T {
        locked(Key(name), create: create, body)
    }

    /// ``locked(_:create:_:)`` with the name's hash already known.
    func locked<T>(_ key: Key, create: Bool, _ body: (VolunteerChannel?) -> T) -> T {
        let name = key.name
        return shard(key).channels.withLock { channels in
            var channel = channels.byKey[key]
            if channel == nil && create {
                let made = VolunteerChannel(name: name, settings: settings, now: clock.now())
                channels.byKey[key] = made
                channel = made
            }
            let result = body(channel)
            if let channel, channel.isUnused(now: clock.now()) { channels.byKey.removeValue(forKey: key) }
            return result
        }
    }

    /// Runs `body` on every channel of each shard in turn, under that shard's lock, then forgets the channels
    /// nothing refers to any more at `now`.
    func sweep(now: Int64, _ body: (VolunteerChannel) -> Void) {
        for shard in shards {
            shard.channels.withLock { channels in
                for channel in channels.byKey.values { body(channel) }
                for (name, channel) in channels.byKey where channel.isUnused(now: now) {
                    channels.byKey.removeValue(forKey: name)
                }
            }
        }
    }

    /// Which channels ``names(_:)`` lists.
    package enum Filter: Sendable {
        /// Channels with a subscriber on this node.
        case subscribed
        /// Channels with a donation gate (a donation active on this node).
        case gated
    }

    /// The names of the channels held in memory that pass `filter`, each read under its shard's lock.
    package func names(_ filter: Filter) -> [String] {
        var names: [String] = []
        for shard in shards {
            names += shard.channels.withLock { channels -> [String] in
                var found: [String] = []
                for (name, channel) in channels.byKey {
                    switch filter {
                    case .subscribed: if !channel.subscribers.isEmpty { found.append(name.name) }
                    case .gated: if !channel.donations.isEmpty { found.append(name.name) }
                    }
                }
                return found
            }
        }
        return names
    }

    /// Channels held in memory.
    package var count: Int { shards.reduce(0) { $0 + $1.channels.withLock { $0.byKey.count } } }
}
