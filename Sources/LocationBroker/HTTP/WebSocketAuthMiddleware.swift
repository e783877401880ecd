import Hummingbird
import HummingbirdWebSocket

/// Verifies the token of a WebSocket upgrade (`Authorization: Bearer` or `?token=`) before the upgrade.
///
/// A refused upgrade answers non-200 here, so Hummingbird passes the request on to the main router, whose
/// `GET /v1/ws` route (``WebSocketEndpoint``) answers with the precise 401 body.
struct WebSocketAuthMiddleware: RouterMiddleware {
    typealias Context = BrokerRequestContext

    let verifier: TokenVerifier
    let isDraining: @Sendable () -> Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !isDraining(), let token = WebSocketEndpoint.token(of: request) else { return Response(status: .unauthorized) }
        guard case .success(let identity) = await verifier.verify(token) else { return Response(status: .unauthorized) }
        var context = context
        context.identity = identity
        return try await next(request, context)
    }
}

/// The plain-HTTP side of `GET /v1/ws`: it answers only requests that were not upgraded, and says why.
struct WebSocketEndpoint: Sendable {
    let verifier: TokenVerifier
    let metrics: BrokerMetrics
    let isDraining: @Sendable () -> Bool

    /// The token from `Authorization: Bearer` or, for browsers, `?token=`.
    static func token(of request: Request) -> String? {
        request.headers.bearerCredential ?? request.uri.queryParameters.get("token")
    }

    func explainRefusal(_ request: Request) async -> Response {
        if isDraining() {
            metrics.reject(.unavailable)
            return JSONResponse.error(.serviceUnavailable, .init(.unavailable, "the broker is shutting down; reconnect to another node or retry shortly"))
        }
        guard let token = Self.token(of: request) else {
            metrics.reject(.unauthorized)
            return JSONResponse.error(.unauthorized, .init(.unauthorized, "no token: send Authorization: Bearer <JWT>, or ?token=<JWT> from a browser"))
        }
        if case .failure(let error) = await verifier.verify(token) {
            metrics.reject(.unauthorized)
            return JSONResponse.error(.unauthorized, error)
        }
        metrics.reject(.badRequest)
        return JSONResponse.error(.badRequest, .init(.badRequest, "this endpoint speaks WebSocket only: send a WebSocket upgrade request"))
    }
}
