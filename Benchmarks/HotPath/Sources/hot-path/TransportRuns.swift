import NIOCore
import NIOEmbedded
import NIOWebSocket

/// The bare transport's share of a fan-out, in process: one `position` frame's bytes written and flushed to every
/// subscriber's NIO pipeline, as Benchmarks/BaselineServer does (`writeAndFlush` per member), ending in a handler
/// that drops the bytes where the socket would take them. No system call, no event-loop hop: the user-space
/// pipeline work of a delivery, to compare with the broker's core per delivery (`BrokerRuns`).
enum TransportRuns {
    /// `framedByEncoder`: a `WebSocketFrame` through NIO's `WebSocketFrameEncoder`, as the baseline writes it;
    /// otherwise the complete frame's bytes (header included) written as one `ByteBuffer`, as the broker's socket
    /// writer writes its pre-framed frames below the encoder.
    static func fanOut(subscribers: Int, positions: Int, framedByEncoder: Bool) throws -> Int {
        let sink = Sink()
        let channels = try (0..<subscribers).map { _ in
            let channel = EmbeddedChannel()
            try channel.pipeline.syncOperations.addHandler(SinkHandler(sink: sink))
            if framedByEncoder { try channel.pipeline.syncOperations.addHandler(WebSocketFrameEncoder()) }
            return channel
        }
        let payload = ByteBuffer(bytes: HotPathFrames.position)
        let write: Write = framedByEncoder ? .frame(WebSocketFrame(fin: true, opcode: .text, data: payload)) : .bytes(framed(payload))
        // Once outside the measured part, so that lazily made state is not counted.
        callgrindMeasuredWrites(channels, write, positions: 1)
        let before = sink.flushes
        callgrindMeasuredWrites(channels, write, positions: positions)
        let delivered = sink.flushes - before
        guard delivered == subscribers * positions else {
            throw RunError(description: "flushed \(delivered) frames, expected \(subscribers * positions)")
        }
        for channel in channels { _ = try channel.finish(acceptAlreadyClosed: true) }
        return delivered
    }

    enum Write {
        case frame(WebSocketFrame)
        case bytes(ByteBuffer)
    }

    @inline(never)
    static func callgrindMeasuredWrites(_ channels: [EmbeddedChannel], _ write: Write, positions: Int) {
        for _ in 0..<positions {
            for channel in channels {
                switch write {
                case .frame(let frame): channel.writeAndFlush(frame, promise: nil)
                case .bytes(let bytes): channel.writeAndFlush(bytes, promise: nil)
                }
            }
        }
    }

    /// A whole unmasked text frame: the header (2 or 4 bytes for the sizes used here), then `payload`.
    private static func framed(_ payload: ByteBuffer) -> ByteBuffer {
        var frame = ByteBuffer()
        frame.writeInteger(UInt8(0x81))
        if payload.readableBytes < 126 {
            frame.writeInteger(UInt8(payload.readableBytes))
        } else {
            frame.writeInteger(UInt8(126))
            frame.writeInteger(UInt16(payload.readableBytes))
        }
        frame.writeImmutableBuffer(payload)
        return frame
    }
}

/// Counts the writes and flushes that reached the bottom of the pipelines; the runs are single-threaded.
final class Sink {
    var flushes = 0
    var writes = 0
}

/// Where the socket would be: completes each write and counts each flush, forwarding nothing.
final class SinkHandler: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer

    private let sink: Sink

    init(sink: Sink) {
        self.sink = sink
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        sink.writes += 1
        promise?.succeed()
    }

    func flush(context: ChannelHandlerContext) {
        sink.flushes += 1
    }
}
