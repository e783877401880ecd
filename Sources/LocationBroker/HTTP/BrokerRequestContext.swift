import Hummingbird
import HummingbirdWebSocket

/// The request context of every route: Hummingbird's core storage, the WebSocket upgrade slot, and the
/// identity that ``WebSocketAuthMiddleware`` verified.
struct BrokerRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<BrokerRequestContext>
    /// Set by ``WebSocketAuthMiddleware`` when the token is valid.
    var identity: VerifiedIdentity?

    init(source: Source) {
        self.coreContext = .init(source: source)
        self.webSocket = .init()
        self.identity = nil
    }
}
