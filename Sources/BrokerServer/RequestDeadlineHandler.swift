import BrokerHTTP
import BrokerProtocol
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Bounds how long an HTTP client may take over each request, whatever pace it sends at: the idle timeout is reset
/// by every byte, so a client dripping a head or a body one byte every few seconds would otherwise hold its socket
/// (and a file descriptor) forever.
///
/// - A request's body must be whole within ``Deadlines/body`` of its head; past it the client gets 408 (or, when a
///   response has begun, the socket is closed).
/// - After a response, the next request's head must be whole within ``Deadlines/nextHead``; past it the socket is
///   closed (the first head has the handshake timeout, ``BrokerServerChannel``).
/// - A response that ends before its request's body was read (a refusal that needed no body: 401, 404, 413...)
///   says `Connection: close`, and the socket is closed once it is written: the body nobody wants is not read at
///   the client's pace.
///
/// It sits in NIO's HTTP pipeline after the codec to HTTP types, so it sees requests and responses as parts.
package final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    /// The bounds, documented in docs/SECURITY.md ("Slow clients").
    package struct Deadlines: Sendable {
        /// From a request's head to the end of its body.
        var body: TimeAmount
        /// From the end of a response to the end of the next request's head.
        var nextHead: TimeAmount

        package init(body: TimeAmount, nextHead: TimeAmount) {
            self.body = body
            self.nextHead = nextHead
        }
    }

    private enum Phase {
        /// A request's head arrived; its body is being read. `responded` once a response head went out.
        case readingBody(responded: Bool)
        /// The request was read whole; the route is answering it.
        case answering
        /// The response ended; the next request's head is awaited.
        case awaitingHead
        /// The deadline passed or the body was left unread: the socket is being closed, nothing more is written.
        case closing
    }

    private let deadlines: Deadlines
    /// The handler is added once the first request's head was read (the upgrade decision needed it).
    private var phase = Phase.readingBody(responded: false)
    private var deadline: Scheduled<Void>?

    init(deadlines: Deadlines) {
        self.deadlines = deadlines
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        arm(deadlines.body, context: context)
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            if case .awaitingHead = phase {
                phase = .readingBody(responded: false)
                arm(deadlines.body, context: context)
            }
        case .body:
            break
        case .end:
            if case .readingBody = phase {
                phase = .answering
                disarm()
            }
        }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch (unwrapOutboundIn(data), phase) {
        case (_, .closing):
            promise?.fail(ChannelError.ioOnClosedChannel)
        case (.head(var head), .readingBody):
            // The body will not be read: the client learns the socket closes after this response.
            phase = .readingBody(responded: true)
            head.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case (.end, .readingBody):
            // Answered before the body was read: close rather than drain the rest at the client's pace.
            phase = .closing
            disarm()
            let written = promise ?? context.eventLoop.makePromise()
            let channel = context.channel
            written.futureResult.whenComplete { _ in channel.close(promise: nil) }
            context.write(data, promise: written)
        case (.end, .answering):
            phase = .awaitingHead
            arm(deadlines.nextHead, context: context)
            context.write(data, promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }

    /// The deadline of the current phase passed.
    private func expired(context: ChannelHandlerContext) {
        deadline = nil
        switch phase {
        case .readingBody(responded: false):
            phase = .closing
            let seconds = deadlines.body.nanoseconds / 1_000_000_000
            let body = JSONResponse.errorBody(BrokerError(.badRequest, "the request's body did not arrive whole within \(seconds) s of its head"))
            let head = HTTPResponse(
                status: .requestTimeout,
                headerFields: [.contentType: "application/json; charset=utf-8", .contentLength: String(body.readableBytes), .connection: "close"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(body)), promise: nil)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        case .readingBody(responded: true), .awaitingHead:
            phase = .closing
            context.close(promise: nil)
        case .answering, .closing:
            break
        }
    }

    private func arm(_ after: TimeAmount, context: ChannelHandlerContext) {
        deadline?.cancel()
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: after) { handler.value.expired(context: bound.value) }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}
