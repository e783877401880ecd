import BrokerHTTP
import TrackingPage

extension Broker {
    /// The broker's routes and their methods, for ``MethodNotAllowedMiddleware`` (docs/openapi.yaml, the WebSocket,
    /// the tracking page, its map tiles, Leaflet's files and the PubNub-compatible endpoints).
    static let knownRoutes: [MethodNotAllowedMiddleware.Route] = [
        .init(segments: ["healthz"], methods: [.get]),
        .init(segments: ["metrics"], methods: [.get]),
        .init(segments: ["openapi.yaml"], methods: [.get]),
        .init(segments: ["v1", "ws"], methods: [.get]),
        .init(segments: ["v1", "owntracks"], methods: [.post]),
        .init(segments: ["v1", "donations", "*"], methods: [.get, .put, .delete]),
        .init(segments: ["v1", "donations", "*", "watch-token"], methods: [.post]),
        .init(segments: ["v1", "push", "key"], methods: [.get]),
        .init(segments: ["v1", "push", "subscriptions"], methods: [.post, .delete]),
        .init(segments: ["v1", "events", "failed"], methods: [.get]),
        .init(segments: ["v1", "events", "retry"], methods: [.post]),
        .init(segments: ["track", "*"], methods: [.get]),
        .init(segments: ["tiles", "*", "*", "*"], methods: [.get]),
        // The PubNub-compatible endpoints (PubNubRoutes).
        .init(segments: ["publish", "*", "*", "0", "*", "*", "*"], methods: [.get], headAsGet: false),
        .init(segments: ["publish", "*", "*", "0", "*", "*"], methods: [.post]),
        .init(segments: ["v2", "subscribe", "*", "*", "0"], methods: [.get]),
        .init(segments: ["time", "0"], methods: [.get]),
        .init(segments: ["v2", "presence", "sub-key", "*", "channel", "*", "leave"], methods: [.get]),
        .init(segments: ["v2", "presence", "sub-key", "*", "channel", "*", "heartbeat"], methods: [.get]),
    ] + LeafletAssets.files.map { .init(segments: ("assets/leaflet/" + $0.name).split(separator: "/").map(String.init), methods: [.get]) }
}
