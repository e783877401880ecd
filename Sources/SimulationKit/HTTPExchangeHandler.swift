import NIOCore
import NIOHTTP1

/// One HTTP/1.1 request and the promise its response completes.
struct HTTPExchange: Sendable {
    var head: HTTPRequestHead
    var body: ByteBuffer?
    var promise: EventLoopPromise<HTTPReply>
}

/// A complete HTTP response.
struct HTTPReply: Sendable {
    var status: Int
    var body: ByteBuffer
    /// Whether the server keeps the connection open for another request.
    var keepAlive: Bool
}

/// Turns ``HTTPExchange`` writes into HTTP/1.1 requests and completes each one's promise with the whole response.
///
/// One request at a time per connection; the body of a response is bounded (``maximumBodyBytes``).
final class HTTPExchangeHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPExchange
    typealias OutboundOut = HTTPClientRequestPart

    static let maximumBodyBytes = 1 << 20

    /// The server closed the connection before it answered: the request may be retried on a new connection.
    struct ConnectionClosed: Error, CustomStringConvertible {
        var description: String { "the broker closed the HTTP connection before answering" }
    }

    private var pending: EventLoopPromise<HTTPReply>?
    private var status = 0
    private var keepAlive = true
    private var body = ByteBuffer()

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let exchange = unwrapOutboundIn(data)
        guard pending == nil else {
            exchange.promise.fail(SimulationError("an HTTP connection was asked for two requests at once"))
            promise?.fail(ChannelError.inappropriateOperationForState)
            return
        }
        // A kept-alive connection the broker closed while it waited in the pool: its close may already have been
        // seen here, and then nothing would ever fail the exchange. Said at once, so the caller retries.
        guard context.channel.isActive else {
            exchange.promise.fail(ConnectionClosed())
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        pending = exchange.promise
        status = 0
        body.clear()
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        if let requestBody = exchange.body { context.write(wrapOutboundOut(.body(.byteBuffer(requestBody))), promise: nil) }
        // A request that cannot be written is never answered: its exchange fails with the write.
        let written = promise ?? context.eventLoop.makePromise()
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        written.futureResult.whenFailure { _ in handler.value.fail(ConnectionClosed()) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
            keepAlive = head.isKeepAlive
        case .body(var part):
            guard body.readableBytes + part.readableBytes <= Self.maximumBodyBytes else {
                fail(SimulationError("the broker's HTTP response is larger than \(Self.maximumBodyBytes) bytes"))
                context.close(promise: nil)
                return
            }
            body.writeBuffer(&part)
        case .end:
            let reply = HTTPReply(status: status, body: body, keepAlive: keepAlive)
            let promise = pending
            pending = nil
            promise?.succeed(reply)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(ConnectionClosed())
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
        context.close(promise: nil)
    }

    private func fail(_ error: any Error) {
        let promise = pending
        pending = nil
        promise?.fail(error)
    }
}
