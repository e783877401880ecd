import Atomics
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A receiver on a free loopback port that records every request and answers by its path:
/// `/status/<code>` with that status, `/redirect` with a 307 to `/landing`, `/hang` never, `/stall-body` with a head
/// and no body, `/huge` with a 64 MiB body, anything else with 204.
final class RecordingHTTPServer: Sendable {
    /// One request as it arrived.
    struct Request: Sendable {
        var method: HTTPMethod
        var uri: String
        var headers: HTTPHeaders
        var body: [UInt8]
    }

    let port: Int
    private let channel: any Channel
    private let recorded: Recorded

    /// The requests received so far, in order.
    var requests: [Request] { recorded.requests.withLockedValue { $0 } }

    /// Whether a `/huge` answer was cut short because the client hung up.
    var hugeAnswerAbandoned: Bool { recorded.hugeAbandoned.load(ordering: .relaxed) }

    private init(port: Int, channel: any Channel, recorded: Recorded) {
        self.port = port
        self.channel = channel
        self.recorded = recorded
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    static func start() async throws -> RecordingHTTPServer {
        let recorded = Recorded()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Responder(recorded: recorded))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return RecordingHTTPServer(port: channel.localAddress?.port ?? 0, channel: channel, recorded: recorded)
    }

    /// Stops listening; connections still open close with the test process's event loop.
    func stop() async throws {
        try await channel.close()
    }

    private final class Recorded: Sendable {
        let requests = NIOLockedValueBox<[Request]>([])
        let hugeAbandoned = ManagedAtomic<Bool>(false)
    }

    private final class Responder: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let recorded: Recorded
        private var current: Request?

        init(recorded: Recorded) { self.recorded = recorded }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                current = Request(method: head.method, uri: head.uri, headers: head.headers, body: [])
            case .body(var chunk):
                current?.body += chunk.readBytes(length: chunk.readableBytes) ?? []
            case .end:
                guard let request = current else { return }
                current = nil
                recorded.requests.withLockedValue { $0.append(request) }
                answer(request, context: context)
            }
        }

        private func answer(_ request: Request, context: ChannelHandlerContext) {
            switch request.uri {
            case "/hang":
                return
            case "/stall-body":
                // The head promises a body that never comes.
                respond(context, status: .ok, headers: ["Content-Length": "100"], body: nil)
            case "/redirect":
                respond(context, status: .temporaryRedirect, headers: ["Location": "/landing"])
            case "/huge":
                let size = 64 << 20
                respond(context, status: .ok, headers: ["Content-Length": "\(size)"], body: nil)
                // Written in 1 MiB pieces as the socket takes them; the client is expected to hang up early.
                writeHuge(context, remaining: size)
            default:
                if request.uri.hasPrefix("/status/"), let code = Int(request.uri.dropFirst("/status/".count)) {
                    respond(context, status: HTTPResponseStatus(statusCode: code))
                } else {
                    respond(context, status: .noContent)
                }
            }
        }

        private func respond(_ context: ChannelHandlerContext, status: HTTPResponseStatus, headers: HTTPHeaders = [:], body: String? = "") {
            var headers = headers
            if let body {
                headers.replaceOrAdd(name: "Content-Length", value: "\(body.utf8.count)")
            }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            if let body {
                if !body.isEmpty { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil) }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            } else {
                context.flush()
            }
        }

        private func writeHuge(_ context: ChannelHandlerContext, remaining: Int) {
            guard remaining > 0 else {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            let piece = min(remaining, 1 << 20)
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let recorded = self.recorded
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: 0x61, count: piece))))).whenComplete { result in
                switch result {
                case .success:
                    let (responder, context) = loopBound.value
                    responder.writeHuge(context, remaining: remaining - piece)
                case .failure:
                    recorded.hugeAbandoned.store(true, ordering: .relaxed)
                }
            }
        }
    }
}
