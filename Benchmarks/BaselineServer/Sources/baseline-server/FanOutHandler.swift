import NIOCore
import NIOWebSocket

/// The one handler of an upgraded connection: joins its room, forwards each text frame to the room's other
/// connections, answers pings and closes cleanly.
///
/// No parsing, no authentication, no gating, no outbox: the frame's payload is unmasked into one ByteBuffer,
/// and one `WebSocketFrame` sharing that buffer is written and flushed to every other member. That is the
/// transport's own cost of a fan-out, which the broker's figures are divided by.
final class FanOutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let room: String
    private let rooms: Rooms
    private var joined = false

    init(room: String, rooms: Rooms) {
        self.room = room
        self.rooms = rooms
    }

    func handlerAdded(context: ChannelHandlerContext) {
        rooms.join(room, context.channel)
        joined = true
    }

    func channelInactive(context: ChannelHandlerContext) {
        leave(context)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        leave(context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text where frame.fin:
            forward(frame.unmaskedData, from: context)
        case .text, .continuation, .binary:
            // The bench sends whole text frames only; anything else is not what is being measured.
            close(context, code: .unacceptableData)
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            // Echo the peer's close code, then close the socket once it is written.
            var data = frame.unmaskedData
            let code = data.readWebSocketErrorCode() ?? .normalClosure
            close(context, code: code)
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Writes `payload` once as a frame, then that same frame to every other connection of the room.
    private func forward(_ payload: ByteBuffer, from context: ChannelHandlerContext) {
        let frame = WebSocketFrame(fin: true, opcode: .text, data: payload)
        let sender = context.channel
        let here = context.eventLoop
        for members in rooms.members(of: room).values {
            guard let loop = members.first?.eventLoop else { continue }
            if loop === here {
                for member in members where member !== sender { member.writeAndFlush(frame, promise: nil) }
            } else {
                // One hop for the whole batch on that loop, not one per connection.
                loop.execute {
                    for member in members { member.writeAndFlush(frame, promise: nil) }
                }
            }
        }
    }

    private func close(_ context: ChannelHandlerContext, code: WebSocketErrorCode) {
        leave(context)
        var data = context.channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in channel.close(promise: nil) }
    }

    private func leave(_ context: ChannelHandlerContext) {
        guard joined else { return }
        joined = false
        rooms.leave(room, context.channel)
    }
}
