import BrokerHTTP
import BrokerProtocol
import HTTPTypes
import Hummingbird
import TrackingPage

/// Answers a method a known path does not serve with 405 and the `Allow` header (RFC 9110 §15.5.6), instead of
/// the router's 404, which would say the path does not exist. HEAD goes on to the router, which answers it as GET
/// without the body, except where a GET changes something.
struct MethodNotAllowedMiddleware: RouterMiddleware {
    package typealias Context = BrokerRequestContext

    /// A path's segments, `*` standing for any one segment, and the methods it serves.
    struct Route: Sendable {
        let segments: [String]
        let methods: [HTTPRequest.Method]
        /// Whether HEAD is answered as GET; not where a GET changes something (PubNub's publish), since a HEAD must
        /// be safe to send.
        var headAsGet = true
    }

    /// The broker's routes (docs/openapi.yaml, the WebSocket, the tracking page, its map tiles, Leaflet's files and the
    /// PubNub-compatible endpoints).
    static let routes: [Route] = [
        Route(segments: ["healthz"], methods: [.get]),
        Route(segments: ["metrics"], methods: [.get]),
        Route(segments: ["openapi.yaml"], methods: [.get]),
        Route(segments: ["v1", "ws"], methods: [.get]),
        Route(segments: ["v1", "owntracks"], methods: [.post]),
        Route(segments: ["v1", "donations", "*"], methods: [.get, .put, .delete]),
        Route(segments: ["v1", "donations", "*", "watch-token"], methods: [.post]),
        Route(segments: ["v1", "push", "key"], methods: [.get]),
        Route(segments: ["v1", "push", "subscriptions"], methods: [.post, .delete]),
        Route(segments: ["v1", "events", "failed"], methods: [.get]),
        Route(segments: ["v1", "events", "retry"], methods: [.post]),
        Route(segments: ["track", "*"], methods: [.get]),
        Route(segments: ["tiles", "*", "*", "*"], methods: [.get]),
        // The PubNub-compatible endpoints (PubNubRoutes).
        Route(segments: ["publish", "*", "*", "0", "*", "*", "*"], methods: [.get], headAsGet: false),
        Route(segments: ["publish", "*", "*", "0", "*", "*"], methods: [.post]),
        Route(segments: ["v2", "subscribe", "*", "*", "0"], methods: [.get]),
        Route(segments: ["time", "0"], methods: [.get]),
        Route(segments: ["v2", "presence", "sub-key", "*", "channel", "*", "leave"], methods: [.get]),
        Route(segments: ["v2", "presence", "sub-key", "*", "channel", "*", "heartbeat"], methods: [.get]),
    ] + LeafletAssets.files.map { Route(segments: ("assets/leaflet/" + $0.name).split(separator: "/").map(String.init), methods: [.get]) }

    let metrics: BrokerMetrics

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let segments = request.uri.path.split(separator: "/", omittingEmptySubsequences: true)
        guard let route = Self.routes.first(where: { Self.matches($0.segments, segments) }),
            !route.methods.contains(request.method), !(request.method == .head && route.methods.contains(.get) && route.headAsGet)
        else {
            return try await next(request, context)
        }
        metrics.reject(.badRequest)
        let allowed = route.methods.map(\.rawValue).joined(separator: ", ")
        var response = JSONResponse.error(
            .methodNotAllowed, .init(.badRequest, "\(request.method.rawValue) is not served here; this path serves \(allowed)"))
        response.headers[.allow] = allowed
        return response
    }

    private static func matches(_ pattern: [String], _ segments: [Substring]) -> Bool {
        pattern.count == segments.count && zip(pattern, segments).allSatisfy { $0 == "*" || $0 == $1 }
    }
}
