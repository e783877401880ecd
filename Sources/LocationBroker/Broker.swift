import BrokerProtocol
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
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
    /// The application, the presence sweeper and the drain service, in ServiceGroup order.
    let services: [any Service]

    /// Opens the store, rebuilds the gates and wires the routes.
    /// - Parameter onServerRunning: called with the bound port once the server listens.
    static func build(
        configuration: BrokerConfiguration, logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> Broker {
        let metrics = BrokerMetrics()
        let hub = Hub(settings: HubSettings(configuration), metrics: metrics)
        let store = try SQLiteDonationStore(path: configuration.database)
        let snapshot = try await store.activeDonations()
        hub.load(snapshot)
        logger.info("donations loaded", metadata: ["active": "\(snapshot.donations.count)", "database": "\(configuration.database)"])
        let verifier = try await TokenVerifier(configuration: configuration)
        let donations = DonationService(store: store, hub: hub, logger: logger)
        let draining = DrainFlag()
        let isDraining: @Sendable () -> Bool = { draining.isSet }

        let router = Router(context: BrokerRequestContext.self)
        let endpoint = WebSocketEndpoint(verifier: verifier, metrics: metrics, hub: hub, isDraining: isDraining)
        router.get("v1/ws") { request, _ in
            let (status, error) = await endpoint.refusal(for: request.head)
            return JSONResponse.error(status, error)
        }
        DonationRoutes(service: donations, metrics: metrics, maxBodyBytes: configuration.maxBodyBytes)
            .register(on: router, backendKey: configuration.backendKey ?? "")
        OperationsRoutes(metrics: metrics, isDraining: isDraining).register(on: router)
        OwnTracksRoutes(verifier: verifier, hub: hub, metrics: metrics, maxBodyBytes: configuration.maxBodyBytes).register(on: router)
        TrackingPage().register(on: router)

        let session = WebSocketSession(
            hub: hub, heartbeatSeconds: configuration.heartbeatSeconds, maxFrameBytes: configuration.maxFrameBytes,
            invalidFramesPerMinute: configuration.maxInvalidFramesPerMinute)
        let webSocket = BrokerServerChannel.WebSocketSettings(
            maxFrameBytes: configuration.maxFrameBytes, heartbeat: .seconds(Int64(configuration.heartbeatSeconds)),
            handshakeTimeout: .seconds(Int64(configuration.handshakeTimeoutSeconds)))
        let plain = HTTPServerBuilder { responder in
                BrokerServerChannel(
                    responder: responder, http1: .init(idleTimeout: .seconds(90)), webSocket: webSocket,
                    authorize: { await endpoint.authorize($0) },
                    refuse: { await endpoint.refusal(for: $0) },
                    serve: { inbound, outbound, context in
                        let connection = hub.connect(context.identity, logger: context.logger)
                        let channel = context.channel
                        connection.outbox.setAbortHandler {
                            // The writer may be stuck on a full socket: give the close handshake a moment, then cut.
                            channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
                        }
                        try await session.run(connection, inbound: inbound, outbound: outbound)
                    })
            }
        let app = Application(
            router: router,
            server: try TLSFiles.serverBuilder(plain, configuration: configuration),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "location-broker"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
        let drain = ConnectionDrainService(
            hub: hub, draining: draining, grace: .seconds(Int64(configuration.shutdownGraceSeconds)), logger: logger)
        return Broker(
            configuration: configuration, hub: hub, metrics: metrics, donations: donations, draining: draining, logger: logger,
            services: [app, PresenceSweeper(hub: hub), drain])
    }

    /// The services in one group that shuts down gracefully on `signals` (SIGTERM and SIGINT by default).
    func serviceGroup(signals: [UnixSignal] = [.sigterm, .sigint]) -> ServiceGroup {
        ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: signals, logger: logger))
    }

    /// Runs until SIGTERM or SIGINT, then drains and returns.
    func run() async throws {
        try await serviceGroup().run()
    }
}
