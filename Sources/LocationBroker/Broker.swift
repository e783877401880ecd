import BrokerAuth
import BrokerCore
import BrokerWebSocket
import Foundation
import Logging
import PubNubCompatibility
import ServiceLifecycle
import UnixSignals

/// A broker ready to run: the HTTP/WebSocket application and its companion services, built from one
/// configuration. `location-broker` runs it; the tests build and run the very same thing on port 0.
struct Broker: Sendable {
    let configuration: BrokerConfiguration
    let hub: Hub
    let metrics: BrokerMetrics
    let donations: DonationService
    let draining: DrainFlag
    let logger: Logger
    /// In the order they start; a graceful shutdown stops them in reverse (``build(configuration:logger:onServerRunning:)``
    /// says why this order).
    let services: [any Service]

    /// Builds the broker in named steps: the start checks, the store and the hub over it, access (tokens and
    /// refusal budgets), trip events, the routes, the listener, and the services in their order.
    /// - Parameter onServerRunning: called with the bound port once the server listens.
    static func build(
        configuration: BrokerConfiguration, logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> Broker {
        let metrics = BrokerMetrics()
        // Every file and key set the settings name is checked before anything else (as check-config does), so that a
        // broker that could not serve them refuses to start; a JWKS is read once here.
        let jwks = try await StartupChecks.run(
            configuration, onJWKSRefresh: { metrics.recordJWKSRefresh(succeeded: $0, keys: $1) }, logger: logger)
        // One wall clock for the hub and everything that stamps or judges time next to it.
        let clock = WallClock.system
        let node = configuration.nodeID ?? "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)"
        // Trip events are decided only when someone is told of them.
        let recorder = configuration.tellsEvents ? EventRecorder(onDropped: { metrics.events.dropped.increment() }) : nil
        let eventRules = recorder.map {
            TrackingEventRules(
                sink: $0, approachingMinutes: configuration.eventsApproachingMinutes, silentAfterSeconds: configuration.eventsSilentSeconds)
        }

        let stored = try await openStore(configuration, node: node, metrics: metrics, clock: clock, eventRules: eventRules, logger: logger)
        let hub = stored.hub
        logger.info("donations loaded", metadata: ["active": "\(stored.activeDonations)", "store": "\(configuration.storeDescription)"])

        let store = stored.store
        let access = Access(
            verifier: try await TokenVerifier(configuration: configuration, keys: jwks?.ring),
            watchLinks: await WatchTokenVerifier(
                backendKey: configuration.backendKey ?? "", ttlSeconds: Int64(configuration.watchTokenTTLSeconds),
                lookup: { id in try await store.donation(id: id) }),
            identityRefusals: RefusalBudget(perMinute: configuration.maxInvalidFramesPerMinute, clock: clock),
            addressRefusals: RefusalBudget(perMinute: configuration.maxRefusedUpgradesPerMinute, clock: clock))

        let events = try EventServices.make(
            configuration: configuration, recorder: recorder, outbox: stored.eventOutbox, heardSince: stored.heardSince, node: node, metrics: metrics,
            clock: clock, logger: logger)
        let donations = DonationService(store: store, hub: hub, metrics: metrics, clock: clock, logger: logger, events: events.donationEvents)

        let draining = DrainFlag()
        let isDraining: @Sendable () -> Bool = { draining.isSet }
        let endpoint = WebSocketEndpoint(
            verifier: access.verifier, watchLinks: access.watchLinks, metrics: metrics, hub: hub, isDraining: isDraining,
            identityRefusals: access.identityRefusals, addressRefusals: access.addressRefusals)
        let polls = LongPollSlots(perIdentity: configuration.pubNubMaxPollsPerIdentity, total: configuration.pubNubMaxPolls)
        let router = try router(
            configuration, stored: stored, access: access, donations: donations, events: events, endpoint: endpoint, polls: polls, metrics: metrics,
            clock: clock, isDraining: isDraining, logger: logger)

        let messages = ClientMessageHandler(
            hub: hub, metrics: metrics, clock: clock, heartbeatSeconds: configuration.heartbeatSeconds, refusals: access.identityRefusals)
        let server = try listener(
            configuration, router: router, endpoint: endpoint, messages: messages, logger: logger, onServerRunning: onServerRunning)
        // In a cluster, clients are served only once the node listens to the others (it would miss what they publish).
        let app = stored.listening.map { StartsWhenOpen(latch: $0, service: server) } ?? server

        // The order services start in; a graceful shutdown stops them in reverse, each before what it needs:
        // 1. the store's services (a cluster's PostgreSQL pool and bus): stop last, after everything that writes;
        // 2. trip events (outbox writer, dispatchers): stop after the application, so that what the last
        //    requests decided is stored and sent;
        // 3. the application (HTTP and WebSocket server);
        // 4. the sweeper (presence, expired tokens, ended poll holds);
        // 5. the drain: stops first, closing every WebSocket with 1001 before the server stops;
        // 6. the JWKS refresher, when keys come from a URL.
        let sweeper = PresenceSweeper(hub: hub, budgets: [access.identityRefusals, access.addressRefusals], polls: polls)
        let drain = ConnectionDrainService(
            hub: hub, draining: draining, grace: .seconds(Int64(configuration.shutdownGraceSeconds)), logger: logger)
        let services: [any Service] = stored.services + events.services + [app, sweeper, drain] + (jwks.map { [$0 as any Service] } ?? [])
        return Broker(
            configuration: configuration, hub: hub, metrics: metrics, donations: donations, draining: draining, logger: logger, services: services)
    }

    /// The services in one group that shuts down gracefully on `signals` (SIGTERM and SIGINT by default).
    func serviceGroup(signals: [UnixSignal] = [.sigterm, .sigint]) -> ServiceGroup {
        ServiceGroup(configuration: .init(services: services.map { NamedService($0) as any Service }, gracefulShutdownSignals: signals, logger: logger))
    }

    /// Runs until SIGTERM or SIGINT, then drains and returns.
    func run() async throws {
        try await serviceGroup().run()
    }
}
