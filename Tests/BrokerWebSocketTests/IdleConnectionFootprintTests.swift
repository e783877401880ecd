import Logging
import NIOCore
import NIOWebSocket
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import BrokerWebSocket

/// glibc's `malloc_usable_size`, which the Glibc module does not export.
@_silgen_name("malloc_usable_size")
private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer) -> Int

/// What the broker itself holds for one open, idle WebSocket, object by object, as the allocator sizes it:
/// an idle connection is to cost no more than a bare SwiftNIO server's, and these objects are
/// all the broker adds to SwiftNIO's own. A field added carelessly (a closure, a copied struct, a timer per
/// connection) shows here before it shows in `scripts/bench`.
final class IdleConnectionFootprintTests: XCTestCase {
    /// The bytes the allocator gave `object`.
    private func allocated(_ object: AnyObject) -> Int {
        mallocUsableSize(Unmanaged.passUnretained(object).toOpaque())
    }

    func testAnIdleConnectionsOwnObjectsStayWithinTheirBudget() throws {
        let socket = try EmbeddedWebSocket()
        defer { socket.stop() }
        _ = try socket.frames()
        let handler = try socket.channel.pipeline.syncOperations.handler(type: WebSocketConnectionHandler.self)
        // As the handler makes them.
        let outbox = Outbox(limit: socket.hub.settings.outboxBytes, stallLimit: socket.hub.settings.slowConsumerStall)
        let connection = socket.hub.connect(identity: "donor@example.org", expiresAt: .max, sink: outbox, logger: Logger(label: "test"))
        defer { socket.hub.disconnect(connection) }
        // Before the handlers were folded into one (heaptrack, release build, bytes asked of the allocator): the handler 329 (344 given),
        // plus a scheduled heartbeat (~260 in four allocations), the outbox 192 plus two closures of 56, the
        // connection 136 plus its one-entry subscription dictionary, 136.
        // 200 (184 before) since the handler reads frames itself (its ``ClientFrameReader``, one word): NIO's decoder
        // handler it replaces cost 344 (its `ByteToMessageHandler` 184, its decoder 56, its pipeline context 104).
        XCTAssertLessThanOrEqual(allocated(handler), 200, "the handler")
        // 152 (136 before) since its subscriptions' lock is a `Mutex` held inline: the box NIO's lock needed beside it
        // (a `pthread_mutex_t` and the value, about 96 bytes more) is gone.
        XCTAssertLessThanOrEqual(allocated(connection), 152, "the connection")
        XCTAssertLessThanOrEqual(allocated(outbox), 200, "the outbox")
    }
}
