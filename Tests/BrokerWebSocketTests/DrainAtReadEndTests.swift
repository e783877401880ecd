import BrokerBenchmarkFixtures
import NIOCore
import NIOEmbedded
import XCTest

/// Where a volunteer's position is written when its donor is served by the same event loop: as soon as the
/// volunteer's frame is handled, inside that read, as a bare NIO server writes it (pairs' p99), not in a
/// task after the loop's other reads; a donor on another loop is still written by its own loop.
final class DrainAtReadEndTests: XCTestCase {
    func testAPositionForADonorOnTheVolunteersLoopIsWrittenWhenThePublishIsHandled() throws {
        let loop = EmbeddedEventLoop()
        let pair = try Pair(volunteerLoop: loop, donorLoop: loop)
        defer { pair.stop() }

        // The frame read as a socket read hands it over, and the loop not run afterwards: no task may be needed.
        pair.volunteer.pipeline.fireChannelRead(pair.fixture.publishFrame())

        XCTAssertEqual(try pair.donorWrites(), 1, "the position waits for a loop task")
        loop.run()
        XCTAssertEqual(try pair.donorWrites(), 0, "the position was written twice")
    }

    func testADonorOnAnotherLoopIsWrittenByItsOwnLoopNotInsideTheVolunteersRead() throws {
        let volunteerLoop = EmbeddedEventLoop()
        let donorLoop = EmbeddedEventLoop()
        let pair = try Pair(volunteerLoop: volunteerLoop, donorLoop: donorLoop)
        defer { pair.stop() }

        pair.volunteer.pipeline.fireChannelRead(pair.fixture.publishFrame())
        volunteerLoop.run()

        XCTAssertEqual(try pair.donorWrites(), 0, "another loop's socket was written from the volunteer's read")
        donorLoop.run()
        XCTAssertEqual(try pair.donorWrites(), 1)
    }

    func testEveryPublishOfABurstIsWrittenAsItIsHandled() throws {
        let loop = EmbeddedEventLoop()
        let pair = try Pair(volunteerLoop: loop, donorLoop: loop)
        defer { pair.stop() }
        // Three frames in one socket read: the handler reads them one by one.
        var burst = ByteBuffer()
        for _ in 0..<3 {
            var frame = pair.fixture.publishFrame()
            burst.writeBuffer(&frame)
        }

        pair.volunteer.pipeline.fireChannelRead(burst)

        XCTAssertEqual(try pair.donorWrites(), 3)
    }

    /// A volunteer and the donor watching it, each served by the broker's own handlers on an `EmbeddedChannel`
    /// (``DeliveryFixture``), the donor subscribed, one position published and the donor's frames so far read.
    private struct Pair {
        let fixture = DeliveryFixture(donors: 1)
        let volunteer: EmbeddedChannel
        let donor: EmbeddedChannel

        init(volunteerLoop: EmbeddedEventLoop, donorLoop: EmbeddedEventLoop) throws {
            volunteer = EmbeddedChannel(loop: volunteerLoop)
            donor = EmbeddedChannel(loop: donorLoop)
            try volunteer.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
            try donor.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
            try fixture.serveVolunteer(on: volunteer.pipeline.syncOperations)
            try fixture.serve(donor: 0, on: donor.pipeline.syncOperations)
            try donor.writeInbound(fixture.subscribeFrame(donor: 0))
            // The first publish also says the volunteer is online: its frames are read here too.
            try volunteer.writeInbound(fixture.publishFrame())
            volunteerLoop.run()
            donorLoop.run()
            // The welcome, the subscription's answer, the presence and the first position.
            XCTAssertGreaterThan(try donorWrites(), 0)
        }

        /// How many writes reached the donor's socket since the last call.
        func donorWrites() throws -> Int {
            var count = 0
            while try donor.readOutbound(as: ByteBuffer.self) != nil { count += 1 }
            return count
        }

        func stop() {
            _ = try? volunteer.finish(acceptAlreadyClosed: true)
            _ = try? donor.finish(acceptAlreadyClosed: true)
        }
    }
}
