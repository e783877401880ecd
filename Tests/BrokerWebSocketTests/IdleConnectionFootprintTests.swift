import Logging
import NIOCore
import NIOWebSocket
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import BrokerWebSocket

/// What the broker itself holds for one open, idle WebSocket, object by object, as the allocator sizes it:
/// an idle connection is to cost no more than a bare SwiftNIO server's, and these objects are
/// all the broker adds to SwiftNIO's own. A field added carelessly (a closure, a copied struct, a timer per
/// connection) shows here before it shows in `scripts/bench`.
final class IdleConnectionFootprintTests: XCTestCase {
    /// The bytes glibc gives an object of `object`'s class: the instance size the class's metadata records
    /// (Swift's ABI, non-Objective-C class metadata: kind, superclass, flags, instance address point, then the size),
    /// rounded up as glibc's `malloc` rounds a request (8 bytes of header, chunks of 16). Not `malloc_usable_size`
    /// of the object itself: glibc may hand a chunk 16 bytes larger when the rest of a free one is too small to
    /// split, so that figure depends on the heap's history.
    private func allocated(_ object: AnyObject) -> Int {
        let metadata = unsafeBitCast(type(of: object), to: UnsafeRawPointer.self)
        let instanceSize = Int(metadata.load(fromByteOffset: 24, as: UInt32.self))
        return max(24, (instanceSize + 8 + 15) / 16 * 16 - 8)
    }

    /// Two words of header and two stored words: 32 bytes asked, a 48-byte chunk, 40 usable.
    private final class TwoWords {
        var first = 0
        var second = 0
    }

    func testTheSizeReadFromTheMetadataIsTheClasssOwn() {
        XCTAssertEqual(allocated(TwoWords()), 40)
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
        XCTAssertLessThanOrEqual(allocated(connection), 136, "the connection")
        XCTAssertLessThanOrEqual(allocated(outbox), 200, "the outbox")
    }
}
