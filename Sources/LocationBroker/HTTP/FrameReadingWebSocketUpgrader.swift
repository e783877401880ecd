import NIOCore
import NIOHTTP1
import NIOWebSocket

/// NIO's WebSocket upgrader without its frame decoder, for the upgrades NIO's HTTP pipeline makes (a watch link,
/// a long head, a frame sent with the head): NIO's handshake (the headers it checks, the 101 it builds), then
/// only NIO's frame encoder before the broker's handler, which reads the client's frames itself
/// (``ClientFrameReader``). NIO's own upgrader would add its decoder, which cannot be taken out again without
/// handing frames it already read (a frame sent with the head) to a handler that takes bytes.
struct FrameReadingWebSocketUpgrader<UpgradeResult: Sendable>: NIOTypedHTTPServerProtocolUpgrader {
    /// NIO's upgrader, for its handshake only: its `upgrade` is never called.
    private let handshake: NIOTypedWebSocketServerUpgrader<UpgradeResult>
    private let upgradePipelineHandler: @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<UpgradeResult>

    /// - Parameters:
    ///   - shouldUpgrade: as NIO's: the headers to add to the 101, or `nil` to refuse the upgrade.
    ///   - upgradePipelineHandler: adds the broker's handler once NIO's frame encoder is in the pipeline.
    init(
        shouldUpgrade: @escaping @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<HTTPHeaders?>,
        upgradePipelineHandler: @escaping @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<UpgradeResult>
    ) {
        handshake = NIOTypedWebSocketServerUpgrader(
            enableAutomaticErrorHandling: false, shouldUpgrade: shouldUpgrade,
            upgradePipelineHandler: { channel, _ in channel.eventLoop.makeFailedFuture(ChannelError.inappropriateOperationForState) })
        self.upgradePipelineHandler = upgradePipelineHandler
    }

    var supportedProtocol: String { handshake.supportedProtocol }
    var requiredUpgradeHeaders: [String] { handshake.requiredUpgradeHeaders }

    func buildUpgradeResponse(channel: any Channel, upgradeRequest: HTTPRequestHead, initialResponseHeaders: HTTPHeaders) -> EventLoopFuture<HTTPHeaders> {
        handshake.buildUpgradeResponse(channel: channel, upgradeRequest: upgradeRequest, initialResponseHeaders: initialResponseHeaders)
    }

    func upgrade(channel: any Channel, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<UpgradeResult> {
        channel.eventLoop.makeCompletedFuture {
            try BrokerServerChannel.addFrameEncoder(to: channel.pipeline.syncOperations)
        }.flatMap {
            upgradePipelineHandler(channel, upgradeRequest)
        }
    }
}
