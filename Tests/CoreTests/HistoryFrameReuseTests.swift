import BrokerProtocol
import NIOConcurrencyHelpers
import NIOCore
import XCTest

@testable import BrokerCore

/// A full history hands the storage of the frame it drops to the next position's frame, so that a publish
/// allocates and frees no buffer. That a frame some donor's queue still holds keeps its bytes is the
/// framing's part (copy-on-write): BrokerWebSocketTests' TextFrameTests.
final class HistoryFrameReuseTests: XCTestCase {
    /// Frames like the WebSocket transport does when handed a buffer: cleared and written over (copy-on-write),
    /// counting the buffers it was handed.
    private final class ReusingFraming: Sendable {
        let handed = NIOLockedValueBox(0)
        var framing: Framing {
            Framing(reusing: { payload, storage in
                var buffer = storage.take() ?? ByteBuffer()
                if buffer.capacity > 0 { self.handed.withLockedValue { $0 += 1 } }
                buffer.clear()
                buffer.writeBytes(payload)
                return PreparedFrame(bytes: buffer, payloadOffset: 0)
            })
        }
    }

    func testOnlyAFullHistoryHandsItsOldestFrameToTheNextOne() throws {
        let reusing = ReusingFraming()
        let fixture = HubFixture(framing: reusing.framing) { $0.historySize = 2 }
        fixture.move(to: .beingLookedFor)
        let (_, donor) = try fixture.watcher()
        fixture.publish()
        fixture.clock.advance(by: 1_000)
        fixture.publish()
        XCTAssertEqual(reusing.handed.withLockedValue { $0 }, 0, "the history was not full yet")

        fixture.clock.advance(by: 1_000)
        let third = try fixture.publish().get().seq
        XCTAssertEqual(reusing.handed.withLockedValue { $0 }, 1, "the third position is framed in the first one's storage")
        let seqs = try donor.frames().compactMap { frame -> Int64? in
            if case .position(let update) = frame { return update.seq }
            return nil
        }
        XCTAssertEqual(seqs.count, 3)
        XCTAssertEqual(seqs.last, third)
    }
}
