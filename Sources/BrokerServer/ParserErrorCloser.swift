import NIOCore
import NIOHTTP1

/// Closes the connection when NIO's HTTP parser refuses what the client sent (obs-fold, a space before a colon, a
/// NUL...). NIO's `HTTPServerProtocolErrorHandler`, before it, has answered 400; nothing after the bad bytes can be
/// read, so waiting for the handshake or idle timeout would only hold the socket.
final class ParserErrorCloser: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPServerRequestPart

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is HTTPParserError {
            context.close(promise: nil)
        }
        context.fireErrorCaught(error)
    }
}
