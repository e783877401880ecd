import BrokerProtocol
import FleetSimulation
import NIOCore
import NIOWebSocket

/// What a bench connection does once it is up.
public enum LoadRole: Sendable, Equatable {
    /// A donor: subscribes to a donation and measures each position that arrives.
    case subscriber(donation: String)
    /// A volunteer: the worker publishes on it; it only counts replies.
    case publisher
    /// Connects, and nothing more (the connect storm).
    case plain
}

/// The one handler of a bench connection, after the WebSocket upgrade: answers pings, subscribes after
/// `welcome` when it is a subscriber, and counts what arrives into ``LoadStats``. On the baseline, which says
/// nothing first and has no subscriptions, a connection is ready as soon as it is upgraded.
///
/// It runs on the connection's event loop only, so its state needs no lock; there is no task per connection.
final class LoadConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// The largest message accepted in pieces (fragmented frames); the broker never fragments.
    static let maximumMessageBytes = 1 << 16

    private let role: LoadRole
    private let stats: LoadStats
    private let ready: EventLoopPromise<Void>
    /// Wall-clock microseconds when the TCP connect began, for the handshake time.
    private let started: Int64
    private let server: BenchServer
    private var isReady = false
    private var lastSeq: Int64?
    private var fragments: ByteBuffer?

    init(role: LoadRole, stats: LoadStats, ready: EventLoopPromise<Void>, started: Int64, server: BenchServer = .broker) {
        self.role = role
        self.stats = stats
        self.ready = ready
        self.started = started
        self.server = server
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The baseline sends no welcome: the handshake ends with the upgrade.
        guard server == .baseline else { return }
        stats.connectedAfter(microseconds: LatencyStamp.nowMicroseconds() - started)
        markReady()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            if frame.fin {
                text(context: context, frame.unmaskedData)
            } else {
                fragments = frame.unmaskedData
            }
        case .continuation:
            guard var buffer = fragments else { return }
            var part = frame.unmaskedData
            guard buffer.readableBytes + part.readableBytes <= Self.maximumMessageBytes else {
                fragments = nil
                stats.error("client", detail: "a message larger than \(Self.maximumMessageBytes) bytes")
                return
            }
            buffer.writeBuffer(&part)
            fragments = frame.fin ? nil : buffer
            if frame.fin { text(context: context, buffer) }
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            var data = frame.unmaskedData
            let code = data.readInteger(as: UInt16.self).map(String.init) ?? "none"
            let reason = data.readString(length: data.readableBytes) ?? ""
            stats.add(.closedByServer)
            stats.error("close-\(code)", detail: reason)
            if !isReady { ready.fail(SimulationError("the broker closed the connection (\(code) \(reason))")) }
            context.close(promise: nil)
        default:
            break
        }
    }

    private func text(context: ChannelHandlerContext, _ buffer: ByteBuffer) {
        if case .subscriber = role, isReady,
            let fields = buffer.withUnsafeReadableBytes({ ServerFrameScanner.position($0) })
        {
            delivered(seq: fields.seq, timestamp: fields.timestamp, accuracy: fields.accuracy)
            return
        }
        let frame: ServerFrame
        do {
            frame = try WireJSON.decodeServerFrame(buffer.readableBytesView)
        } catch {
            stats.error("undecodable", detail: String(buffer: buffer).prefix(200).description)
            return
        }
        switch frame {
        case .welcome:
            stats.connectedAfter(microseconds: LatencyStamp.nowMicroseconds() - started)
            if case .subscriber(let donation) = role {
                let bytes = Array(#"{"type":"subscribe","id":"s","donation":"#.utf8) + Self.quoted(donation) + [UInt8(ascii: "}")]
                send(context: context, bytes)
            } else {
                markReady()
            }
        case .subscribed:
            markReady()
        case .position(let update):
            delivered(seq: update.seq, timestamp: update.position.timestamp, accuracy: update.position.accuracy)
        case .error(let error):
            stats.error(error.code.rawValue, detail: error.message)
            if !isReady {
                ready.fail(SimulationError("\(error.code.rawValue): \(error.message)"))
                context.close(promise: nil)
            }
        default:
            stats.add(.otherFrames)
        }
    }

    private func delivered(seq: Int64, timestamp: Int64, accuracy: Double?) {
        if let lastSeq {
            if seq <= lastSeq {
                stats.add(.duplicates)
                return
            }
            if seq > lastSeq + 1 { stats.add(.gaps, Int(min(seq - lastSeq - 1, Int64(Int32.max)))) }
        }
        lastSeq = seq
        let now = LatencyStamp.nowMicroseconds()
        let sent = LatencyStamp.microseconds(timestamp: timestamp, accuracy: accuracy) ?? timestamp * 1_000
        stats.delivered(sentMicroseconds: sent, latencyMicroseconds: now - sent)
    }

    private func markReady() {
        guard !isReady else { return }
        isReady = true
        stats.add(.connected)
        ready.succeed(())
    }

    private func send(context: ChannelHandlerContext, _ bytes: [UInt8]) {
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: buffer)), promise: nil)
    }

    /// A JSON string literal of a donation id (letters, digits and `._:-` only, so nothing needs escaping).
    static func quoted(_ text: String) -> [UInt8] {
        [UInt8(ascii: "\"")] + Array(text.utf8) + [UInt8(ascii: "\"")]
    }

    func channelInactive(context: ChannelHandlerContext) {
        if isReady { stats.add(.connected, -1) }
        ready.fail(SimulationError("the connection closed before it was ready"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        stats.error("socket", detail: "\(error)")
        context.close(promise: nil)
    }
}
