import BrokerProtocol
import HTTPTypes
import Hummingbird

/// Answers a method a known path does not serve with 405 and the `Allow` header (RFC 9110 §15.5.6), instead of
/// the router's 404, which would say the path does not exist. HEAD goes on to the router, which answers it as GET
/// without the body, except where a GET changes something. The known paths are the application's, given at
/// initialisation.
package struct MethodNotAllowedMiddleware: RouterMiddleware {
    package typealias Context = BrokerRequestContext

    /// A path's segments, `*` standing for any one segment, and the methods it serves.
    package struct Route: Sendable {
        let segments: [String]
        let methods: [HTTPRequest.Method]
        /// Whether HEAD is answered as GET; not where a GET changes something (PubNub's publish), since a HEAD must
        /// be safe to send.
        let headAsGet: Bool

        package init(segments: [String], methods: [HTTPRequest.Method], headAsGet: Bool = true) {
            self.segments = segments
            self.methods = methods
            self.headAsGet = headAsGet
        }
    }

    /// The paths known and the methods each serves; a path none of them matches goes on to the router.
    let routes: [Route]
    /// Counts each refusal (the metrics' `rejected` series).
    let countRefusal: @Sendable (ErrorCode) -> Void

    package init(routes: [Route], countRefusal: @escaping @Sendable (ErrorCode) -> Void) {
        self.routes = routes
        self.countRefusal = countRefusal
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let segments = request.uri.path.split(separator: "/", omittingEmptySubsequences: true)
        guard let route = routes.first(where: { Self.matches($0.segments, segments) }),
            !route.methods.contains(request.method), !(request.method == .head && route.methods.contains(.get) && route.headAsGet)
        else {
            return try await next(request, context)
        }
        countRefusal(.badRequest)
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
