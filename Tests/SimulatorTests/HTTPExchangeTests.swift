import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization
import XCTest

@testable import SimulationKit

/// The simulator's backend calls: a request written into a connection the broker has closed fails at once, so the
/// caller retries on a fresh one, instead of waiting for a timeout that turns into a lost backend update.
final class HTTPExchangeTests: XCTestCase {
    func testARequestOnAConnectionAlreadyClosedFailsAtOnceAsClosed() throws {
        let channel = EmbeddedChannel(handler: HTTPExchangeHandler())
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()
        try channel.close().wait()
        let reply = channel.eventLoop.makePromise(of: HTTPReply.self)
        let head = HTTPRequestHead(version: .http1_1, method: .DELETE, uri: "/v1/donations/d-1")
        channel.pipeline.write(HTTPExchange(head: head, body: nil, promise: reply), promise: nil)
        assertFailedAsClosed(reply.futureResult, on: channel)
    }

    func testARequestThatCannotBeWrittenFailsAsClosed() throws {
        let channel = EmbeddedChannel(handlers: [FailingWrites(), HTTPExchangeHandler()])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()
        let reply = channel.eventLoop.makePromise(of: HTTPReply.self)
        let head = HTTPRequestHead(version: .http1_1, method: .DELETE, uri: "/v1/donations/d-1")
        channel.pipeline.write(HTTPExchange(head: head, body: nil, promise: reply), promise: nil)
        channel.flush()
        assertFailedAsClosed(reply.futureResult, on: channel)
        _ = try? channel.finish()
    }

    /// Runs the channel's loop and checks that `reply` failed as closed by then, without waiting for anything.
    private func assertFailedAsClosed(_ reply: EventLoopFuture<HTTPReply>, on channel: EmbeddedChannel, line: UInt = #line) {
        let outcome = Mutex<Result<HTTPReply, any Error>?>(nil)
        reply.whenComplete { result in outcome.withLock { $0 = result } }
        channel.embeddedEventLoop.run()
        guard case .failure(let error)? = outcome.withLock({ $0 }) else { return XCTFail("the exchange did not fail at once", line: line) }
        XCTAssertTrue(error is HTTPExchangeHandler.ConnectionClosed, "\(error)", line: line)
    }
}

/// Fails every write, as a socket whose peer has gone.
private final class FailingWrites: ChannelOutboundHandler {
    typealias OutboundIn = HTTPClientRequestPart

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        promise?.fail(ChannelError.ioOnClosedChannel)
    }
}
