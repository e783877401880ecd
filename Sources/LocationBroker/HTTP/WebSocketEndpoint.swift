import BrokerAuth
import BrokerCore
import BrokerHTTP
import BrokerProtocol
import BrokerWebSocket
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// Who may open a WebSocket at `GET /v1/ws`, decided for the upgrade handler (``WebSocketUpgradeHandler``), and
/// the answer to a request there that was not an upgrade.
package struct WebSocketEndpoint: Sendable {
    let verifier: TokenVerifier
    let watchLinks: WatchTokenVerifier
    let metrics: BrokerMetrics
    let hub: Hub
    let isDraining: @Sendable () -> Bool
    /// Refusals charged to a verified identity (the one its frames are charged to): an identity past its budget
    /// is not let in to spend more.
    let identityRefusals: RefusalBudget
    /// Refused upgrades charged to the source address, before any token is trusted.
    let addressRefusals: RefusalBudget

    /// - Parameters:
    ///   - identityRefusals: the budget the identities' frames are charged to; by default one of 10 a minute.
    ///   - addressRefusals: by default 60 refused upgrades a minute per address.
    package init(
        verifier: TokenVerifier, watchLinks: WatchTokenVerifier, metrics: BrokerMetrics, hub: Hub, isDraining: @escaping @Sendable () -> Bool,
        identityRefusals: RefusalBudget? = nil, addressRefusals: RefusalBudget? = nil
    ) {
        self.verifier = verifier
        self.watchLinks = watchLinks
        self.metrics = metrics
        self.hub = hub
        self.isDraining = isDraining
        self.identityRefusals = identityRefusals ?? RefusalBudget(perMinute: 10, clock: .system)
        self.addressRefusals = addressRefusals ?? RefusalBudget(perMinute: 60, clock: .system)
    }

    /// The token from `Authorization: Bearer` or, for browsers, `?token=`.
    static func token(of request: HTTPRequest) -> String? {
        if let credential = request.headerFields.bearerCredential { return credential }
        guard let path = request.path else { return nil }
        return URI(path).queryParameters.get("token")
    }

    /// The identity of an upgrade request, when the broker takes new sockets and the token is valid. A client token
    /// is decided at once (no task, no actor hop: the connect storm's cost); only a watch link waits for the store.
    /// - Parameter address: the client's address, whose refused upgrades are charged to it; `nil` for a request
    ///   that was not an upgrade (its refusal is an answer, and nothing is let in).
    package func authorize(_ request: HTTPRequest, from address: SocketAddress?) -> UpgradeDecision {
        if isDraining() {
            return .now(.failure(.init(status: .serviceUnavailable, error: .init(.unavailable, "the broker is shutting down; reconnect to another node or retry shortly"))))
        }
        // Checked before the token is read: an address past its budget costs no verification.
        if let address, addressRefusals.isExhausted(RefusalBudget.key(for: address)) {
            return .now(.failure(.init(
                status: .tooManyRequests,
                error: .init(.limitReached, "too many refused upgrades from your address; retry in \(addressRefusals.secondsPerRefusal) s"))))
        }
        guard let token = Self.token(of: request) else {
            return .now(charged(
                .init(status: .unauthorized, error: .init(.unauthorized, "no token: send Authorization: Bearer <JWT>, or ?token=<JWT> from a browser")),
                to: address))
        }
        let jose = JOSEToken(token)
        if jose.isWatchLink { return .later { [self] in admitted(await watchLinks.verify(token), address: address) } }
        return .now(admitted(verifier.verify(jose), address: address))
    }

    /// The identity of a verified token, when the identity may open one more connection; else why not.
    private func admitted(_ verified: Result<VerifiedIdentity, BrokerError>, address: SocketAddress?) -> Result<VerifiedIdentity, UpgradeRefusal> {
        switch verified {
        case .failure(let error) where error.code == .unavailable:
            return .failure(.init(status: .serviceUnavailable, error: error))
        case .failure(let error):
            return charged(.init(status: .unauthorized, error: error), to: address)
        case .success(let identity):
            if identityRefusals.isExhausted(identity.identity) {
                return .failure(.init(
                    status: .tooManyRequests,
                    error: .init(
                        .limitReached,
                        "\(identity.identity) was refused too often; retry in \(identityRefusals.secondsPerRefusal) s")))
            }
            guard hub.mayConnect(identity.identity) else {
                // Only an upgrade is charged: a plain request (no address) lets nobody in.
                if address != nil { _ = identityRefusals.charge(identity.identity) }
                return .failure(.init(
                    status: .tooManyRequests,
                    error: .init(.limitReached, "\(identity.identity) already has \(hub.settings.maxConnectionsPerIdentity) open connections; close one first")))
            }
            return .success(identity)
        }
    }

    /// A refusal, charged to the address it came from.
    private func charged(_ refusal: UpgradeRefusal, to address: SocketAddress?) -> Result<VerifiedIdentity, UpgradeRefusal> {
        if let address { _ = addressRefusals.charge(RefusalBudget.key(for: address)) }
        return .failure(refusal)
    }

    /// The body of the answer to an upgrade the upgrade handler refused (written by it, then the socket closed);
    /// the refusal is counted.
    package func answer(_ refusal: UpgradeRefusal) -> ByteBuffer {
        metrics.reject(refusal.error.code)
        return JSONResponse.errorBody(refusal.error)
    }

    /// The answer to a request for `/v1/ws` that was not upgraded, and why; the refusal is counted.
    func refusal(for request: HTTPRequest) async -> (HTTPResponse.Status, BrokerError) {
        let refusal = await reason(request)
        metrics.reject(refusal.error.code)
        return (refusal.status, refusal.error)
    }

    private func reason(_ request: HTTPRequest) async -> UpgradeRefusal {
        guard request.path?.split(separator: "?").first == "/v1/ws" else {
            return .init(status: .notFound, error: .init(.notFound, "no such endpoint; WebSockets are served at /v1/ws"))
        }
        let decision: Result<VerifiedIdentity, UpgradeRefusal>
        switch authorize(request, from: nil) {
        case .now(let decided): decision = decided
        case .later(let check): decision = await check()
        }
        if case .failure(let refusal) = decision { return refusal }
        return .init(status: .badRequest, error: .init(.badRequest, "this endpoint speaks WebSocket only: send a WebSocket upgrade request"))
    }
}
