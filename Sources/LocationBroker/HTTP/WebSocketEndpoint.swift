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

    /// Why an upgrade request was refused: the status and the error of the answer's JSON body.
    struct Refusal: Error, Equatable {
        let status: HTTPResponse.Status
        let error: BrokerError
    }

    /// Whether an upgrade request may become a WebSocket, decided on the socket's event loop. A refusal carries
    /// its reason to the answer: the token is judged once (a forged token is the cheapest thing to send, and a
    /// second check could also see another broker, one connection later, than the one that decided).
    enum Decision: Sendable {
        /// Decided without suspending.
        case now(Result<VerifiedIdentity, Refusal>)
        /// A watch link: whether its donation still exists is read from the store, which suspends.
        case later(@Sendable () async -> Result<VerifiedIdentity, Refusal>)
    }

    /// The identity of an upgrade request, when the broker takes new sockets and the token is valid. A client token
    /// is decided at once (no task, no actor hop: the connect storm's cost); only a watch link waits for the store.
    func authorize(_ request: HTTPRequest) -> Decision {
        if isDraining() {
            return .now(.failure(.init(status: .serviceUnavailable, error: .init(.unavailable, "the broker is shutting down; reconnect to another node or retry shortly"))))
        }
        guard let token = Self.token(of: request) else {
            return .now(.failure(.init(status: .unauthorized, error: .init(.unauthorized, "no token: send Authorization: Bearer <JWT>, or ?token=<JWT> from a browser"))))
        }
        let jose = JOSEToken(token)
        if jose.isWatchLink { return .later { [self] in admitted(await watchLinks.verify(token)) } }
        return .now(admitted(verifier.verify(jose)))
    }

    /// The identity of a verified token, when the identity may open one more connection; else why not.
    private func admitted(_ verified: Result<VerifiedIdentity, BrokerError>) -> Result<VerifiedIdentity, Refusal> {
        switch verified {
        case .failure(let error):
            return .failure(.init(status: error.code == .unavailable ? .serviceUnavailable : .unauthorized, error: error))
        case .success(let identity):
            guard hub.mayConnect(identity.identity) else {
                return .failure(.init(
                    status: .tooManyRequests,
                    error: .init(.limitReached, "\(identity.identity) already has \(hub.settings.maxConnectionsPerIdentity) open connections; close one first")))
            }
            return .success(identity)
        }
    }

    /// The answer to a request for `/v1/ws` that was not upgraded, and why; the refusal is counted.
    /// - Parameter decided: the upgrade's own refusal, when it judged the request: answered as decided, without
    ///   judging the token again.
    func refusal(for request: HTTPRequest, decided: Refusal? = nil) async -> (HTTPResponse.Status, BrokerError) {
        let refusal: Refusal
        if let decided {
            refusal = decided
        } else {
            refusal = await reason(request)
        }
        metrics.reject(refusal.error.code)
        return (refusal.status, refusal.error)
    }

    private func reason(_ request: HTTPRequest) async -> Refusal {
        guard request.path?.split(separator: "?").first == "/v1/ws" else {
            return .init(status: .notFound, error: .init(.notFound, "no such endpoint; WebSockets are served at /v1/ws"))
        }
        let decision: Result<VerifiedIdentity, Refusal>
        switch authorize(request) {
        case .now(let decided): decision = decided
        case .later(let check): decision = await check()
        }
        if case .failure(let refusal) = decision { return refusal }
        return .init(status: .badRequest, error: .init(.badRequest, "this endpoint speaks WebSocket only: send a WebSocket upgrade request"))
    }
}
