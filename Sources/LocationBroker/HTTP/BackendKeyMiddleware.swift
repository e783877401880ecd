import BrokerHTTP
import BrokerProtocol
import Hummingbird

/// Admits only the Ponte backend to the donations API: `Authorization: Bearer <backend key>`.
struct BackendKeyMiddleware: RouterMiddleware {
    package typealias Context = BrokerRequestContext

    let backendKey: String
    let metrics: BrokerMetrics

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let presented = request.headers.bearerCredential else {
            metrics.reject(.unauthorized)
            return JSONResponse.error(.unauthorized, .init(.unauthorized, "the donations API needs Authorization: Bearer <backend key>"))
        }
        guard constantTimeEquals(presented, backendKey) else {
            metrics.reject(.unauthorized)
            return JSONResponse.error(.unauthorized, .init(.unauthorized, "the backend key is not valid"))
        }
        return try await next(request, context)
    }
}
