import BrokerClient
import BrokerProtocol
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// A donor who stops reading is cut off as a slow consumer; the volunteer and every other donor go on.
final class SlowConsumerTests: XCTestCase {
    func testADonorWhoStopsReadingIsCutOffAndSlowsNobody() async throws {
        let live = try await startBroker {
            $0.publishRate = 1_000_000
            $0.publishBurst = 1_000_000
            $0.outboxBytes = 65_536
            $0.slowConsumerSeconds = 1
        }
        try await live.put("d-1", donor: "donor@example.org", state: .beingLookedFor)
        try await live.put("d-2", donor: "frozen@example.org", state: .beingLookedFor)
        let volunteer = try await live.connect("vol@example.org")
        let donor = try await live.connect("donor@example.org")
        try await donor.send(.subscribe(.init(target: .donation("d-1"))))
        guard case .subscribed = try await donor.next() else { return XCTFail("donor not subscribed") }
        let frozen = try await RawWebSocket.connect(port: live.port, token: try await LiveBroker.token("frozen@example.org"))
        try await frozen.sendText(#"{"type":"subscribe","id":"s","donation":"d-2"}"#)

        var lastSeq: Int64?
        var received = 0
        var largestOutbox = 0
        let deadline = ContinuousClock.now + .seconds(30)
        while live.metric("broker_slow_consumers_total") != 1 && ContinuousClock.now < deadline {
            for _ in 0..<200 { try await volunteer.send(.publish(.init(position: position(metresFromHome: 2_000)))) }
            let ack = try await volunteer.publish(position(metresFromHome: 2_000))
            XCTAssertTrue(ack.tracking)
            // The watching donor receives every position, in order, none missing: the 201 of this round.
            let deadline = ContinuousClock.now + .seconds(15)
            var thisRound = 0
            while true {
                guard ContinuousClock.now < deadline else { throw WaitTimeout("the watching donor receives this round's 201 positions", deadline: deadline) }
                let frame = try await donor.next()
                guard case .position(let update) = frame else { continue }
                // One after the other in the donor's view: a missing position would show as a jump.
                if let last = lastSeq { XCTAssertEqual(update.seq, last + 1) }
                lastSeq = update.seq
                received += 1
                thisRound += 1
                if thisRound == 201 { break }
            }
            XCTAssertEqual(thisRound, 201, "a position of this round is missing")
            largestOutbox = max(largestOutbox, live.broker.hub.largestOutboxBytes)
        }
        XCTAssertEqual(live.metric("broker_slow_consumers_total"), 1, "the frozen donor was cut off")
        XCTAssertGreaterThan(live.metric("broker_conflations_total") ?? 0, 0, "positions were conflated before the cut")
        XCTAssertLessThanOrEqual(largestOutbox, 65_536, "queues stay within their bound")
        XCTAssertGreaterThan(received, 200)
        // The volunteer is still served at once, and the frozen socket is closed soon after.
        let after = try await volunteer.publish(position(metresFromHome: 1_500))
        XCTAssertEqual(after.watchers, 1)
        while live.broker.hub.connectionCount > 2 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        XCTAssertEqual(live.broker.hub.connectionCount, 2, "the frozen donor's socket was closed")
        withExtendedLifetime(frozen) {}
        try await live.stop()
    }
}
