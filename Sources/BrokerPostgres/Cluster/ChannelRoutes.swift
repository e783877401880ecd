/// What the bus's writer works out once per volunteer channel instead of once per position: the NOTIFY channels of
/// the channel's bus shards and its stored row's key, both keyed hashes (HMAC-SHA256) of the channel under the
/// cluster secrets, which are fixed for the life of the process.
///
/// The writer's own (one task uses it). Bounded: emptied when it would hold more than ``capacity`` channels, each
/// route a few short strings.
struct ChannelRoutes {
    struct Route {
        /// The NOTIFY channels a position or presence event of the channel goes on, the sealing secret's first.
        let busChannels: [String]
        /// The key of the channel's row in `lb_last_positions` under the sealing secret.
        let channelKey: String
    }

    let keys: ClusterKeys
    /// Channels held at most.
    let capacity: Int
    private var routes: [String: Route] = [:]

    init(keys: ClusterKeys, capacity: Int = 10_000) {
        self.keys = keys
        self.capacity = capacity
    }

    mutating func route(of channel: String) -> Route {
        if let route = routes[channel] { return route }
        if routes.count >= capacity { routes.removeAll(keepingCapacity: true) }
        let route = Route(busChannels: keys.shards(of: channel).map { ClusterShards.channel($0) }, channelKey: keys.channelKey(channel))
        routes[channel] = route
        return route
    }
}
