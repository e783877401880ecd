import Logging
import NIOCore
import NIOEmbedded
import NIOWebSocket

@testable import BrokerCore
@testable import BrokerWebSocket
@testable import LocationBroker

/// One client WebSocket served by the broker's own handlers on an `EmbeddedChannel`, as the upgrader builds
/// it: bytes go in as a client sends them, frames come out as a client reads them, and time is virtual
/// (``advance(by:)``), so heartbeats and close graces are tested without waiting for them.
final class EmbeddedWebSocket {
    /// A frame the broker wrote.
    struct Frame: Equatable {
        var opcode: UInt8
        var payload: [UInt8]

        /// The code and reason of a close frame (`code` is `nil` for a close without one).
        var close: (code: UInt16?, reason: String)? {
            guard opcode == 0x8 else { return nil }
            guard payload.count >= 2 else { return (nil, "") }
            return (UInt16(payload[0]) << 8 | UInt16(payload[1]), String(decoding: payload.dropFirst(2), as: UTF8.self))
        }

        var text: String { String(decoding: payload, as: UTF8.self) }
    }

    /// Counts the reads that reach the socket.
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = Any
        private(set) var reads = 0

        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    /// A socket whose send buffer can fill up: while `stuck`, writes neither reach the wire nor complete, as
    /// with a client that stopped reading (an `EmbeddedChannel` completes every write at its flush otherwise).
    final class SendBuffer: ChannelOutboundHandler {
        typealias OutboundIn = Any
        var stuck = false
        private var held: [EventLoopPromise<Void>?] = []

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            guard !stuck else { return held.append(promise) }
            context.write(data, promise: promise)
        }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            let held = self.held
            self.held = []
            for promise in held { promise?.fail(ChannelError.ioOnClosedChannel) }
            context.close(mode: mode, promise: promise)
        }
    }

    static let text: UInt8 = 0x1, binary: UInt8 = 0x2, continuation: UInt8 = 0x0
    static let close: UInt8 = 0x8, ping: UInt8 = 0x9, pong: UInt8 = 0xA

    /// When the connection's token expires, in seconds since the Unix epoch (far after ``clock``'s start).
    static let tokenExpiresAt: Int64 = 4_000_000_000

    let channel: EmbeddedChannel
    let hub: Hub
    /// The broker's metrics, which the hub and the handlers count into.
    let metrics: BrokerMetrics
    /// The hub's clock (the ping budget's): it moves only when a test moves it.
    let clock: ManualClock
    let readCounter = ReadCounter()
    let sendBuffer = SendBuffer()
    private var written = ByteBuffer()

    /// - Parameters:
    ///   - heartbeatSeconds: the ping period (the welcome frame announces it).
    ///   - maxMessageBytes: `max_frame_bytes`: one frame, and all the fragments of one message.
    ///   - logger: the logger the connection is opened with (its level decides what the handler logs).
    convenience init(
        heartbeatSeconds: Int = 1, maxMessageBytes: Int = 4096, invalidFramesPerMinute: Int = 10, logger: Logger = Logger(label: "EmbeddedWebSocket")
    ) throws {
        let clock = ManualClock(start: 1_700_000_000_000)
        let metrics = BrokerMetrics()
        let hub = Hub(settings: HubSettings(BrokerConfiguration()), metrics: metrics, clock: clock.wallClock, framing: TextFrame.framing)
        let messages = ClientMessageHandler(
            hub: hub, metrics: metrics, clock: clock.wallClock, heartbeatSeconds: heartbeatSeconds, invalidFramesPerMinute: invalidFramesPerMinute)
        try self.init(
            channel: EmbeddedChannel(), identity: "donor@example.org", messages: messages, metrics: metrics, clock: clock,
            maxMessageBytes: maxMessageBytes, logger: logger)
    }

    /// A socket of `identity` served with `messages` (and its hub) on `channel`, which may share its event loop
    /// and clock with other sockets of the same broker (``EmbeddedBroker``).
    init(
        channel: EmbeddedChannel, identity: String, messages: ClientMessageHandler, metrics: BrokerMetrics, clock: ManualClock,
        maxMessageBytes: Int = 4096, logger: Logger = Logger(label: "EmbeddedWebSocket")
    ) throws {
        self.clock = clock
        self.metrics = metrics
        self.channel = channel
        hub = messages.hub
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(sendBuffer)
        try pipeline.addHandler(readCounter)
        // What the upgrade puts before the broker's handler: NIO's frame encoder.
        try WebSocketConnectionHandler.addHandlers(
            to: pipeline, messages: messages, identity: VerifiedIdentity(identity: identity, expiresAt: Self.tokenExpiresAt),
            maxMessageBytes: maxMessageBytes, logger: logger)
        channel.embeddedEventLoop.run()
    }

    /// Whether the socket is still open.
    var isOpen: Bool { channel.isActive }

    /// The value of one series of the broker's metrics, such as `broker_frames_in_total{type="invalid"}`: what the
    /// handlers counted, read without the test importing the broker.
    func metric(_ series: String) -> Double? { metrics.value(of: series) }

    /// Sends one frame as a client does: masked unless told otherwise.
    func send(_ opcode: UInt8, fin: Bool = true, _ payload: [UInt8] = [], masked: Bool = true) throws {
        try channel.writeInbound(Self.frameBytes(opcode, fin: fin, payload, masked: masked))
        channel.embeddedEventLoop.run()
    }

    /// Sends text frames in one socket read, as a client's burst arrives: the handler reads them one by one.
    func sendTextsInOneRead(_ payloads: [[UInt8]]) throws {
        var bytes = ByteBuffer()
        for payload in payloads {
            var frame = Self.frameBytes(Self.text, fin: true, payload, masked: true)
            bytes.writeBuffer(&frame)
        }
        try channel.writeInbound(bytes)
        channel.embeddedEventLoop.run()
    }

    /// Sends `bytes` in reads of `readSize` bytes each, as a slow network hands a client's bytes over.
    func sendSplit(_ bytes: ByteBuffer, readSize: Int) throws {
        var bytes = bytes
        while let read = bytes.readSlice(length: min(readSize, bytes.readableBytes)), read.readableBytes > 0 {
            try channel.writeInbound(read)
            channel.embeddedEventLoop.run()
        }
    }

    /// One frame's bytes as a client sends them.
    static func frameBytes(_ opcode: UInt8, fin: Bool, _ payload: [UInt8], masked: Bool) -> ByteBuffer {
        var frame = ByteBuffer()
        frame.writeInteger((fin ? 0x80 : 0) | opcode)
        let maskBit: UInt8 = masked ? 0x80 : 0
        switch payload.count {
        case ..<126:
            frame.writeInteger(maskBit | UInt8(payload.count))
        case ...0xFFFF:
            frame.writeInteger(maskBit | 126)
            frame.writeInteger(UInt16(payload.count))
        default:
            frame.writeInteger(maskBit | 127)
            frame.writeInteger(UInt64(payload.count))
        }
        if masked {
            let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
            frame.writeBytes(key)
            frame.writeBytes(payload.enumerated().map { $0.element ^ key[$0.offset % 4] })
        } else {
            frame.writeBytes(payload)
        }
        return frame
    }

    func sendText(_ text: String, fin: Bool = true) throws {
        try send(Self.text, fin: fin, Array(text.utf8))
    }

    /// Sends a close frame with `code` (none when `nil`).
    func sendClose(code: UInt16?) throws {
        try send(Self.close, code.map { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } ?? [])
    }

    /// Moves virtual time on, running every timer due meanwhile.
    func advance(by amount: TimeAmount) {
        channel.embeddedEventLoop.advanceTime(by: amount)
    }

    /// Makes the socket writable or not, as the kernel's send buffer would.
    func setWritable(_ writable: Bool) {
        channel.isWritable = writable
        channel.pipeline.fireChannelWritabilityChanged()
        channel.embeddedEventLoop.run()
    }

    /// Every frame the broker wrote since the last call, in order.
    func frames() throws -> [Frame] {
        channel.embeddedEventLoop.run()
        while let bytes = try channel.readOutbound(as: ByteBuffer.self) {
            var bytes = bytes
            written.writeBuffer(&bytes)
        }
        var frames: [Frame] = []
        while let frame = nextFrame() { frames.append(frame) }
        written.discardReadBytes()
        return frames
    }

    /// The frames written since the last call, without the welcome frame.
    func framesAfterWelcome() throws -> [Frame] {
        try frames().filter { !($0.opcode == Self.text && $0.text.contains(#""type":"welcome""#)) }
    }

    /// Stops the channel, whatever state it is in.
    func stop() {
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    /// Reads one complete server frame (never masked) from what was written.
    private func nextFrame() -> Frame? {
        let start = written.readerIndex
        guard let first = written.readInteger(as: UInt8.self), let second = written.readInteger(as: UInt8.self) else {
            written.moveReaderIndex(to: start)
            return nil
        }
        var length = Int(second & 0x7F)
        if length == 126 { length = written.readInteger(as: UInt16.self).map(Int.init) ?? -1 }
        if length == 127 { length = written.readInteger(as: UInt64.self).map { Int($0) } ?? -1 }
        guard length >= 0, let payload = written.readBytes(length: length) else {
            written.moveReaderIndex(to: start)
            return nil
        }
        return Frame(opcode: first & 0x0F, payload: payload)
    }
}
