import AsyncHTTPClient
import BrokerCore
import BrokerStorage
import EventDelivery
import Foundation
import Logging
import NIOPosix
import ServiceLifecycle

/// The parts of a broker that store and deliver trip events, made from its configuration: none when it tells
/// nobody (no `webhook_url`, no `push_subject`).
struct EventServices {
    /// What the donations API needs to write a change's events.
    var donationEvents: DonationEvents?
    /// The VAPID public key the tracking page subscribes with; `nil` while Web Push is off.
    var vapidPublicKey: String?
    /// In ServiceGroup order: the HTTP client first (it stops last), the writer, the dispatcher.
    var services: [any Service] = []

    static func make(
        configuration: BrokerConfiguration, recorder: EventRecorder?, outbox: any EventOutbox,
        heardSince: (@Sendable (String, Int64) async throws -> Bool)?, node: String, metrics: BrokerMetrics, clock: WallClock, logger: Logger
    ) throws -> EventServices {
        guard let recorder else { return EventServices() }
        let timeout = Duration.seconds(configuration.webhookTimeoutSeconds)
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: DeliveryPoster.clientConfiguration())
        let poster = DeliveryPoster(client: client, timeout: timeout)
        var webhooks: (any WebhookSending)?
        if let url = configuration.webhookURL, let secrets = configuration.webhookSecrets {
            let signer = try WebhookSigner(secrets: secrets.map { try WebhookSecret($0) })
            webhooks = WebhookSender(url: url, signer: signer, poster: poster)
        }
        var pushes: (any PushSending)?
        var publicKey: String?
        if let subject = configuration.pushSubject {
            let key = try VAPIDKey.createOrLoad(pemFile: configuration.vapidKeyPath)
            publicKey = key.publicKeyBase64URL
            pushes = PushSender(key: key, topics: PushTopicKey(vapidKey: key), subject: subject, poster: poster, allowedHosts: configuration.pushServiceHosts)
            logger.info("Web Push on", metadata: ["vapid_key_file": "\(configuration.vapidKeyPath)"])
        }
        let doorbell = Doorbell()
        let writer = EventWriter(
            recorder: recorder, outbox: outbox, node: node, webhooks: webhooks != nil, pushes: pushes != nil, heardSince: heardSince,
            silentAfterMilliseconds: Int64(configuration.eventsSilentSeconds) * 1000, metrics: metrics.events, logger: logger,
            onStored: { doorbell.ring() })
        var dispatcher = EventDispatcher(
            outbox: outbox, webhooks: webhooks, pushes: pushes, node: node,
            lease: timeout + .seconds(10), clock: clock, metrics: metrics.events, logger: logger, doorbell: doorbell,
            failures: DeliveryFailureLog(logger: logger, clock: clock))
        dispatcher.retry.giveUpAfterMilliseconds = Int64(configuration.webhookRetryHours) * 3_600_000
        return EventServices(
            donationEvents: DonationEvents(
                recorder: recorder, outbox: outbox, node: node, webhooks: webhooks != nil, pushes: pushes != nil, onStored: { doorbell.ring() }),
            vapidPublicKey: publicKey,
            services: [HTTPClientService(client: client), writer, dispatcher])
    }
}

/// Shuts the deliveries' HTTP client down when the broker stops, after the services that use it.
struct HTTPClientService: Service {
    let client: HTTPClient

    func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }
}

extension BrokerConfiguration {
    /// Whether trip events are decided: only when someone is told of them.
    var tellsEvents: Bool { webhookURL != nil || pushSubject != nil }

    /// The VAPID private key's file: the one configured, or `vapid-private.pem` beside the SQLite database.
    var vapidKeyPath: String {
        vapidPrivateKeyFile ?? URL(fileURLWithPath: database).deletingLastPathComponent().appendingPathComponent("vapid-private.pem").path
    }
}
