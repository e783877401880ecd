import BrokerCore
import BrokerProtocol
import HTTPTypes
import Hummingbird
import HummingbirdCore

/// The plain-HTTP side of `GET /v1/ws`: it answers only requests that were not upgraded, and says why.
struct WebSocketEndpoint: Sendable {
    let verifier: TokenVerifier
    let watchLinks: WatchTokenVerifier
    let metrics: BrokerMetrics
    let hub: Hub
    let isDraining: @Sendable () -> Bool

    /// The token from `Authorization: Bearer` or, for browsers, `?token=`.
    static func token(of request: HTTPRequest) -> String? {
        if let credential = request.headerFields.bearerCredential { return credential }
        guard let path = request.path else { return nil }
        return URI(path).queryParameters.get("token")
    }

    /// Whether an upgrade request may become a WebSocket, decided on the socket's event loop.
    enum Decision: Sendable {
        /// Decided without suspending: the identity, or `nil` to refuse (``refusal(for:)`` says why).
        case now(VerifiedIdentity?)
        /// A watch link: whether its donation still exists is read from the store, which suspends.
        case later(@Sendable () async -> VerifiedIdentity?)
    }

    /// The identity of an upgrade request, when the broker takes new sockets and the token is valid. A client token
    /// is decided at once (no task, no actor hop: the connect storm's cost); only a watch link waits for the store.
    func authorize(_ request: HTTPRequest) -> Decision {
        guard !isDraining(), let token = Self.token(of: request) else { return .now(nil) }
        let jose = JOSEToken(token)
        if jose.isWatchLink { return .later { [self] in admitted(await watchLinks.verify(token)) } }
        return .now(admitted(verifier.verify(jose)))
    }

    /// The identity of a verified token, when the identity may open one more connection.
    private func admitted(_ verified: Result<VerifiedIdentity, BrokerError>) -> VerifiedIdentity? {
        guard case .success(let identity) = verified, hub.mayConnect(identity.identity) else { return nil }
        return identity
    }

    /// A watch link (marked so in its header) goes to the watch-link verifier, anything else to the client-token
    /// verifier; each checks the token completely.
    private func verify(_ token: String) async -> Result<VerifiedIdentity, BrokerError> {
        let jose = JOSEToken(token)
        return jose.isWatchLink ? await watchLinks.verify(token) : verifier.verify(jose)
    }

    /// Why a request for `/v1/ws` was not upgraded; the refusal is counted.
    func refusal(for request: HTTPRequest) async -> (HTTPResponse.Status, BrokerError) {
        let (status, error) = await reason(request)
        metrics.reject(error.code)
        return (status, error)
    }

    private func reason(_ request: HTTPRequest) async -> (HTTPResponse.Status, BrokerError) {
        guard request.path?.split(separator: "?").first == "/v1/ws" else {
            return (.notFound, .init(.notFound, "no such endpoint; WebSockets are served at /v1/ws"))
        }
        if isDraining() {
            return (.serviceUnavailable, .init(.unavailable, "the broker is shutting down; reconnect to another node or retry shortly"))
        }
        guard let token = Self.token(of: request) else {
            return (.unauthorized, .init(.unauthorized, "no token: send Authorization: Bearer <JWT>, or ?token=<JWT> from a browser"))
        }
        switch await verify(token) {
        case .failure(let error):
            return (error.code == .unavailable ? .serviceUnavailable : .unauthorized, error)
        case .success(let identity):
            if !hub.mayConnect(identity.identity) {
                return (
                    .tooManyRequests,
                    .init(.limitReached, "\(identity.identity) already has \(hub.settings.maxConnectionsPerIdentity) open connections; close one first")
                )
            }
        }
        return (.badRequest, .init(.badRequest, "this endpoint speaks WebSocket only: send a WebSocket upgrade request"))
    }
}
