import BrokerCore
import BrokerProtocol
import BrokerWebSocket
import LocationBroker
import Logging
import NIOCore
import NIOWebSocket

/// A hub whose donors are served by the broker's own WebSocket handlers on pipelines the caller provides, for
/// counting a whole delivery in process: the publish, the hop to each socket's event loop (``LoopDrains``), the
/// socket writer's drain and the writes and flushes through the pipeline down to where the socket would be.
/// Exists only for Benchmarks/HotPath; not part of the broker's API.
///
/// The caller makes the channels (say `EmbeddedChannel`s on one `EmbeddedEventLoop`, with a handler at the bottom
/// that drops what reaches the socket), calls ``serve(donor:on:)`` on each, sends each one
/// ``subscribeFrame(donor:)`` as its client would, and runs the loop; then each ``publish()`` queues one frame per
/// donor, written when the loop runs.

public final class DeliveryFixture: Sendable {
    /// How many donors watch the volunteer.
    public let donorCount: Int

    private let scene: BenchmarkScene
    private let messages: ClientMessageHandler
    private let logger = Logger(label: "benchmark")
    /// The largest frame or message the handlers accept, as the broker's default.
    private let maxMessageBytes = BrokerConfiguration.defaults.maxFrameBytes

    /// Builds the hub and the donations; no connection yet.
    public init(donors: Int) {
        let metrics = BrokerMetrics()
        scene = BenchmarkScene(donors: donors, metrics: metrics)
        messages = ClientMessageHandler(hub: scene.hub, metrics: metrics, clock: .system, heartbeatSeconds: 30)
        donorCount = donors
    }

    /// Adds to `pipeline` what an upgrade adds for donor `index` (NIO's frame encoder, then the broker's handler),
    /// below which the caller's handlers stand for the socket. The channel must be active.
    public func serve(donor index: Int, on pipeline: ChannelPipeline.SynchronousOperations) throws {
        try serve(BenchmarkScene.donor(index), on: pipeline)
    }

    /// Adds to `pipeline` what an upgrade adds for the volunteer, as ``serve(donor:on:)`` does for a donor.
    public func serveVolunteer(on pipeline: ChannelPipeline.SynchronousOperations) throws {
        try serve(BenchmarkScene.volunteer, on: pipeline)
    }

    private func serve(_ identity: String, on pipeline: ChannelPipeline.SynchronousOperations) throws {
        try WebSocketConnectionHandler.addHandlers(
            to: pipeline, messages: messages, identity: VerifiedIdentity(identity: identity, expiresAt: .max / 2000),
            maxMessageBytes: maxMessageBytes, logger: logger)
    }

    /// The bytes donor `index`'s client sends to watch its donation: one masked text frame.
    public func subscribeFrame(donor index: Int) -> ByteBuffer {
        Self.maskedTextFrame(Array(#"{"type":"subscribe","id":"s","donation":"\#(BenchmarkScene.donation(index))"}"#.utf8))
    }

    /// The bytes the volunteer's phone sends to publish the scene's position, as `tracker-sim`'s load publishers
    /// send it (no `id`, so the broker answers only a refusal): one masked text frame.
    public func publishFrame() -> ByteBuffer {
        var payload = Array(#"{"type":"publish","position":"#.utf8)
        PositionFrameEncoder.appendPosition(&payload, scene.position)
        payload.append(UInt8(ascii: "}"))
        return Self.maskedTextFrame(payload)
    }

    /// A client's text frame: masked, as RFC 6455 requires of clients.
    private static func maskedTextFrame(_ payload: [UInt8]) -> ByteBuffer {
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        var frame = ByteBuffer()
        frame.writeInteger(UInt8(0x81))
        if payload.count < 126 {
            frame.writeInteger(UInt8(0x80 | payload.count))
        } else {
            frame.writeInteger(UInt8(0x80 | 126))
            frame.writeInteger(UInt16(payload.count))
        }
        frame.writeBytes(key)
        frame.writeBytes(payload.enumerated().map { $0.element ^ key[$0.offset % 4] })
        return frame
    }

    /// Publishes one position as the volunteer.
    /// - Returns: how many donors it was queued for.
    @discardableResult
    public func publish() -> Int {
        switch scene.hub.publish(as: BenchmarkScene.volunteer, position: scene.position) {
        case .success(let outcome): outcome.watchers
        case .failure: 0
        }
    }
}
