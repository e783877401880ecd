import BrokerProtocol
import HummingbirdCore

@testable import BrokerAuth
@testable import BrokerCore
@testable import BrokerHTTP
@testable import BrokerServer
@testable import BrokerWebSocket

extension BrokerListenerTests {
    /// The hub's settings: the broker's defaults.
    static let hubSettings = HubSettings(
        historySize: 32, arrivalRadiusMeters: 150, publishRate: 1, publishBurst: 5, presenceTimeoutMilliseconds: 60_000,
        maxSubscriptionsPerConnection: 16, outboxBytes: 262_144, slowConsumerStall: .seconds(10), maxConnectionsPerIdentity: 4,
        windowToleranceMilliseconds: 2_000, maxPositionAgeMilliseconds: 600_000)

    /// Each accepted connection set up as the broker sets it up, answered by `responder`, with a hub of its own. An
    /// upgrade is let in by an HS256 token of ``secret`` and decided at once, as the broker decides a client token;
    /// a refusal is answered with the broker's JSON error body.
    static func serverChannel(responder: @escaping HTTPChannelHandler.Responder) async throws -> BrokerServerChannel {
        let metrics = UncountedMetrics()
        let hub = Hub(settings: hubSettings, metrics: metrics, clock: .system, framing: TextFrame.framing)
        let verifier = try await TokenVerifier(rules: .init(secret: secret))
        return BrokerServerChannel(
            responder: responder, http1: .init(), webSocket: .init(maxFrameBytes: 4096),
            authorize: { request, _ in
                guard let token = request.headerFields.bearerCredential else {
                    return .now(.failure(UpgradeRefusal(status: .unauthorized, error: BrokerError(.unauthorized, "no token"))))
                }
                return .now(verifier.verify(token).mapError { UpgradeRefusal(status: .unauthorized, error: $0) })
            },
            refusalBody: { JSONResponse.errorBody($0.error) },
            messages: ClientMessageHandler(hub: hub, metrics: metrics, clock: .system, heartbeatSeconds: 30, invalidFramesPerMinute: 10))
    }
}

/// Metrics that count nothing: the listener's tests read none.
final class UncountedMetrics: HubMetrics, WebSocketMetrics {
    func connectionOpened(admitted: Bool) {}
    func connectionClosed() {}
    func rejected(_ code: ErrorCode) {}
    func untracked(_ reason: ServerFrame.UntrackedReason) {}
    func kept(_ fanOut: FanOutTally) {}
    func queued(_ result: EnqueueResult) {}
    func frameRead(_ kind: ClientFrameKind) {}
    func framesWritten(_ count: Int) {}
}
