import BrokerAuth
import BrokerCore
import BrokerHTTP
import BrokerProtocol
import BrokerWebSocket
import EventDelivery
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import PubNubCompatibility
import ServiceLifecycle
import TrackingPage
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
    /// In ServiceGroup order: in a cluster the PostgreSQL pool and the bus (so they stop last), then the
    /// application, the presence sweeper, the drain service and, with a JWKS, its refresher.
    let services: [any Service]

    /// Opens the store, rebuilds the gates and wires the routes.
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
        let hub: Hub
        let store: any DonationStore
        let eventOutbox: any EventOutbox
        var heardSince: (@Sendable (String, Int64) async throws -> Bool)?
        let snapshot: StoreSnapshot
        var clusterServices: [any Service] = []
        var listening: Latch?
        if let location = configuration.store {
            // The configuration refuses a PostgreSQL store without cluster secrets.
            let keys = ClusterKeys(secrets: configuration.clusterSecrets ?? [])
            let outbox = ClusterOutbox(node: node, interest: ShardInterest(keys: keys))
            hub = Hub(
                settings: HubSettings(configuration), metrics: metrics, cluster: outbox, clock: clock, framing: TextFrame.framing, events: eventRules)
            let prepared = try await PostgresSchema.prepare(location, keys: keys, logger: logger)
            snapshot = prepared.snapshot
            hub.load(snapshot)
            hub.seed(prepared.lastPositions)
            if prepared.rejected > 0 {
                metrics.clusterSealedRejected["store"]?.increment(by: Int64(prepared.rejected))
                logger.warning("stored last positions that do not open with the cluster secrets were ignored", metadata: ["rows": "\(prepared.rejected)"])
            }
            let client = PostgresClient(configuration: location.clientConfiguration(), backgroundLogger: logger)
            let postgres = PostgresDonationStore(client: client, node: node, keys: keys, logger: logger)
            store = postgres
            eventOutbox = PostgresEventOutbox(client: client, logger: logger)
            heardSince = { channel, since in try await postgres.heard(channel: channel, since: since) }
            let latch = Latch()
            listening = latch
            clusterServices = [
                PostgresClientService(client: client),
                PostgresBus(
                    location: location, client: client, store: postgres, keys: keys, outbox: outbox, hub: hub, metrics: metrics, logger: logger, listening: latch,
                    heartbeatPeriod: .seconds(configuration.clusterHeartbeatSeconds)),
            ]
            logger.info("cluster node", metadata: ["node": "\(node)", "store": "\(location.description)"])
        } else {
            hub = Hub(settings: HubSettings(configuration), metrics: metrics, clock: clock, framing: TextFrame.framing, events: eventRules)
            // One queue for the donations and the event outbox, so a change and its events are one transaction.
            let database = try SQLiteDatabase.open(path: configuration.database)
            let sqlite = SQLiteDonationStore(database: database)
            eventOutbox = SQLiteEventOutbox(database: database)
            snapshot = try await sqlite.activeDonations()
            store = sqlite
            hub.load(snapshot)
        }
        logger.info("donations loaded", metadata: ["active": "\(snapshot.donations.count)", "store": "\(configuration.storeDescription)"])
        let verifier = try await TokenVerifier(configuration: configuration, keys: jwks?.ring)
        let events = try EventServices.make(
            configuration: configuration, recorder: recorder, outbox: eventOutbox, heardSince: heardSince, node: node, metrics: metrics, clock: clock,
            logger: logger)
        let donations = DonationService(store: store, hub: hub, metrics: metrics, clock: clock, logger: logger, events: events.donationEvents)
        let draining = DrainFlag()
        let isDraining: @Sendable () -> Bool = { draining.isSet }

        // HEAD on every GET route answers as GET without the body (RFC 9110 §9.3.2): monitors send HEAD /healthz.
        let router = Router(context: BrokerRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: MethodNotAllowedMiddleware(metrics: metrics))
        let watchLinks = await WatchTokenVerifier(
            backendKey: configuration.backendKey ?? "", ttlSeconds: Int64(configuration.watchTokenTTLSeconds),
            lookup: { [store] id in try await store.donation(id: id) })
        let identityRefusals = RefusalBudget(perMinute: configuration.maxInvalidFramesPerMinute, clock: clock)
        let addressRefusals = RefusalBudget(perMinute: configuration.maxRefusedUpgradesPerMinute, clock: clock)
        let endpoint = WebSocketEndpoint(
            verifier: verifier, watchLinks: watchLinks, metrics: metrics, hub: hub, isDraining: isDraining, identityRefusals: identityRefusals,
            addressRefusals: addressRefusals)
        router.get("v1/ws") { request, _ in
            let (status, error) = await endpoint.refusal(for: request.head)
            return JSONResponse.error(status, error)
        }
        DonationRoutes(service: donations, watchLinks: watchLinks, metrics: metrics, maxBodyBytes: configuration.maxBodyBytes)
            .register(on: router, backendKey: configuration.backendKey ?? "")
        OperationsRoutes(metrics: metrics, isDraining: isDraining).register(on: router)
        OwnTracksRoutes(verifier: verifier, hub: hub, metrics: metrics, clock: clock, maxBodyBytes: configuration.maxBodyBytes).register(on: router)
        let polls = LongPollSlots(perIdentity: configuration.pubNubMaxPollsPerIdentity, total: configuration.pubNubMaxPolls)
        PubNubRoutes(
            verifier: verifier, hub: hub, clock: clock, slots: polls,
            budgets: PubNubRefusalBudgets(
                addressExhausted: { addressRefusals.isExhausted(RefusalBudget.key(for: $0)) },
                chargeAddress: { _ = addressRefusals.charge(RefusalBudget.key(for: $0)) },
                identityExhausted: { identityRefusals.isExhausted($0) }, chargeIdentity: { _ = identityRefusals.charge($0) },
                secondsPerRefusal: identityRefusals.secondsPerRefusal),
            countRefusal: { metrics.reject($0) }, isDraining: isDraining, hold: .seconds(configuration.pubNubHoldSeconds),
            maxBodyBytes: configuration.maxBodyBytes
        ).register(on: router)
        PushRoutes(
            publicKey: events.vapidPublicKey, watchLinks: watchLinks, outbox: events.vapidPublicKey == nil ? nil : eventOutbox,
            allowedHosts: configuration.pushServiceHosts, metrics: metrics, clock: { clock.now() }
        ).register(on: router)
        EventRoutes(outbox: eventOutbox, metrics: metrics, clock: { clock.now() }).register(on: router, backendKey: configuration.backendKey ?? "")
        try TrackingMap(configuration.map, countRefusal: { metrics.reject($0) }, logger: logger).register(on: router)
        OpenAPIDocument.register(on: router)

        let messages = ClientMessageHandler(
            hub: hub, metrics: metrics, clock: clock, heartbeatSeconds: configuration.heartbeatSeconds, refusals: identityRefusals)
        let webSocket = BrokerServerChannel.WebSocketSettings(
            maxFrameBytes: configuration.maxFrameBytes,
            handshakeTimeout: .seconds(Int64(configuration.handshakeTimeoutSeconds)),
            requestDeadlines: .init(
                body: .seconds(Int64(configuration.requestTimeoutSeconds)), nextHead: .seconds(Int64(3 * configuration.requestTimeoutSeconds))))
        let channel = BrokerServerChannel(
            responder: HTTPResponding.responder(router: router.buildResponder(), date: HTTPDate(), serverName: "location-broker", logger: logger),
            http1: .init(idleTimeout: .seconds(90)), webSocket: webSocket,
            authorize: { endpoint.authorize($0, from: $1) },
            refusalBody: { endpoint.answer($0) },
            messages: messages)
        let app: any Service
        if let tls = try TLSFiles.serverConfiguration(configuration) {
            app = BrokerListener(
                child: try TLSChannel(channel, tlsConfiguration: tls), host: configuration.host, port: configuration.port,
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger, onListening: onServerRunning)
        } else {
            app = BrokerListener(
                child: channel, host: configuration.host, port: configuration.port, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                logger: logger, onListening: onServerRunning)
        }
        let drain = ConnectionDrainService(
            hub: hub, draining: draining, grace: .seconds(Int64(configuration.shutdownGraceSeconds)), logger: logger)
        return Broker(
            configuration: configuration, hub: hub, metrics: metrics, donations: donations, draining: draining, logger: logger,
            // The event services stop after the application, so that what the last requests decided is still stored.
            services: clusterServices + events.services
                + [listening.map { StartsWhenOpen(latch: $0, service: app) } ?? app, PresenceSweeper(hub: hub, budgets: [identityRefusals, addressRefusals], polls: polls), drain]
                + (jwks.map { [$0 as any Service] } ?? []))
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
