import BrokerAuth
import BrokerCore
import BrokerHTTP
import BrokerWebSocket
import Hummingbird
import Logging
import OwnTracksCompatibility
import PubNubCompatibility
import TrackingPage

extension Broker {
    /// What the HTTP routes and the WebSocket upgrade share: who a token names, and what refusals cost.
    struct Access {
        let verifier: TokenVerifier
        let watchLinks: WatchTokenVerifier
        /// Refusals charged to a verified identity (bad frames, refused publishes and subscribes).
        let identityRefusals: RefusalBudget
        /// Refusals charged to a source address before a token is trusted.
        let addressRefusals: RefusalBudget
    }

    /// Every HTTP route: the WebSocket endpoint's refusals, the backend's API, operations, OwnTracks, PubNub,
    /// Web Push, trip events, the tracking page and the OpenAPI document.
    static func router(
        _ configuration: BrokerConfiguration, stored: StorePart, access: Access, donations: DonationService, events: EventServices,
        endpoint: WebSocketEndpoint, polls: LongPollSlots, metrics: BrokerMetrics, clock: WallClock, isDraining: @escaping @Sendable () -> Bool,
        logger: Logger
    ) throws -> Router<BrokerRequestContext> {
        let hub = stored.hub
        let backendKey = configuration.backendKey ?? ""
        // HEAD on every GET route answers as GET without the body (RFC 9110 §9.3.2): monitors send HEAD /healthz.
        let router = Router(context: BrokerRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: MethodNotAllowedMiddleware(routes: knownRoutes, countRefusal: { metrics.reject($0) }))
        router.get("v1/ws") { request, _ in
            let (status, error) = await endpoint.refusal(for: request.head)
            return JSONResponse.error(status, error)
        }
        DonationRoutes(service: donations, watchLinks: access.watchLinks, metrics: metrics, maxBodyBytes: configuration.maxBodyBytes)
            .register(on: router, backendKey: backendKey)
        OperationsRoutes(metrics: metrics, isDraining: isDraining).register(on: router)
        OwnTracksRoutes(
            verifier: access.verifier, hub: hub, countRefusal: { metrics.reject($0) }, clock: clock, maxBodyBytes: configuration.maxBodyBytes
        ).register(on: router)
        let identityRefusals = access.identityRefusals
        let addressRefusals = access.addressRefusals
        PubNubRoutes(
            verifier: access.verifier, hub: hub, clock: clock, slots: polls,
            budgets: PubNubRefusalBudgets(
                addressExhausted: { addressRefusals.isExhausted(RefusalBudget.key(for: $0)) },
                chargeAddress: { _ = addressRefusals.charge(RefusalBudget.key(for: $0)) },
                identityExhausted: { identityRefusals.isExhausted($0) }, chargeIdentity: { _ = identityRefusals.charge($0) },
                secondsPerRefusal: identityRefusals.secondsPerRefusal),
            countRefusal: { metrics.reject($0) }, isDraining: isDraining, hold: .seconds(configuration.pubNubHoldSeconds),
            maxBodyBytes: configuration.maxBodyBytes
        ).register(on: router)
        PushRoutes(
            publicKey: events.vapidPublicKey, watchLinks: access.watchLinks, outbox: events.vapidPublicKey == nil ? nil : stored.eventOutbox,
            allowedHosts: configuration.pushServiceHosts, metrics: metrics, clock: { clock.now() }
        ).register(on: router)
        EventRoutes(outbox: stored.eventOutbox, metrics: metrics, clock: { clock.now() }).register(on: router, backendKey: backendKey)
        try TrackingMap(configuration.map, countRefusal: { metrics.reject($0) }, logger: logger).register(on: router)
        OpenAPIDocument.register(on: router)
        return router
    }
}
