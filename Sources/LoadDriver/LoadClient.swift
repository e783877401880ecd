import BrokerProtocol
#if canImport(Glibc)
import Glibc
#endif
import FleetSimulation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// Opens bench connections: plain SwiftNIO, an HTTP/1.1 upgrade to WebSocket, then one
/// ``LoadConnectionHandler`` per connection. No task per connection, so a worker holds thousands cheaply.
public enum LoadClient {
    /// Where the broker listens and where connections come from.
    public struct Target: Sendable, Codable, Equatable {
        public var host: String
        public var port: Int
        public var path: String

        public init(host: String, port: Int, path: String = "/v1/ws") {
            self.host = host
            self.port = port
            self.path = path
        }
    }

    /// Connects with `token` from `source` (a 127.0.0.x address, or `nil` for the default).
    /// - Parameter server: the broker, whose `welcome` (and `subscribed`) a connection waits for, or the baseline,
    ///   where a connection is ready once upgraded and `token` is `nil`.
    /// - Returns: the channel, once the connection is ready for its role: `welcome` read, and for a subscriber
    ///   `subscribed` too. Fails when the upgrade is refused, the subscription is refused, or the socket fails.
    public static func connect(
        on loop: any EventLoop, target: Target, source: String?, token: String?, role: LoadRole, stats: LoadStats,
        server: BenchServer = .broker
    ) -> EventLoopFuture<any Channel> {
        let ready = loop.makePromise(of: Void.self)
        let started = LatencyStamp.nowMicroseconds()
        var bootstrap = ClientBootstrap(group: loop).connectTimeout(.seconds(10))
        if let source {
            do {
                // The port is picked at connect, for the whole address pair, instead of at bind for the source
                // address alone: bind's pick skips every port a previous run's connections still hold in TIME_WAIT,
                // and a storm right after another slowed to the kernel's search (5,500 -> 900 connections/s, the
                // server mostly idle).
                bootstrap = bootstrap
                    .channelOption(ChannelOptions.Types.SocketOption(level: .ip, name: .init(rawValue: IP_BIND_ADDRESS_NO_PORT)), value: 1)
                    .bind(to: try SocketAddress(ipAddress: source, port: 0))
            } catch {
                return loop.makeFailedFuture(error)
            }
        }
        bootstrap = bootstrap.channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                let upgrader = NIOTypedWebSocketClientUpgrader<Bool>(
                    maxFrameSize: LoadConnectionHandler.maximumMessageBytes,
                    upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                LoadConnectionHandler(role: role, stats: stats, ready: ready, started: started, server: server))
                            return true
                        }
                    })
                var headers = HTTPHeaders()
                headers.add(name: "Host", value: "\(target.host):\(target.port)")
                if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
                headers.add(name: "Content-Length", value: "0")
                let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path, headers: headers)
                let configuration = NIOTypedHTTPClientUpgradeConfiguration<Bool>(
                    upgradeRequestHead: head, upgraders: [upgrader],
                    notUpgradingCompletionHandler: { channel in
                        channel.eventLoop.makeCompletedFuture {
                            channel.close(promise: nil)
                            return false
                        }
                    })
                var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                // The broker's welcome may come in the same read as the 101 response: keep those bytes
                // (NIO's default drops them).
                pipeline.leftOverBytesStrategy = .forwardBytes
                let upgraded = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
                upgraded.whenComplete { result in
                    switch result {
                    case .success(true): break
                    case .success(false): ready.fail(SimulationError("the \(server.rawValue) refused the WebSocket upgrade (token, limit or shutdown)"))
                    case .failure(let error): ready.fail(error)
                    }
                }
            }
        }
        return bootstrap.connect(host: target.host, port: target.port)
            .flatMap { channel in
                channel.closeFuture.whenComplete { _ in ready.fail(SimulationError("the connection closed before it was ready")) }
                return ready.futureResult.map { channel }
            }
            .flatMapError { error in
                ready.fail(error)
                return loop.makeFailedFuture(error)
            }
    }

    /// The text frame of a publish without an id (so the broker answers only when it refuses it).
    public static func publishFrame(_ position: Position, allocator: ByteBufferAllocator) -> WebSocketFrame {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160)
        bytes.append(contentsOf: #"{"type":"publish","position":"#.utf8)
        PositionFrameEncoder.appendPosition(&bytes, position)
        bytes.append(UInt8(ascii: "}"))
        var buffer = allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        return WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: buffer)
    }

    /// The text frame a baseline publisher sends: the very `position` frame the broker would deliver for it, so
    /// that the baseline forwards the same bytes and its subscribers read them exactly as they read the broker's.
    public static func baselineFrame(_ position: Position, channel: String, seq: Int64, allocator: ByteBufferAllocator) -> WebSocketFrame {
        let bytes = PositionFrameEncoder.encode(channel: channel, seq: seq, position: position)
        var buffer = allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        return WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: buffer)
    }
}
