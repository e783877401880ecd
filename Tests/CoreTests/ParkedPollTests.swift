import BrokerProtocol
import Logging
import XCTest

@testable import BrokerCore

/// A held long poll parked in the hub as a subscriber: written to when a position it may see is kept, like a
/// WebSocket, and not counted as a connection of its identity.
final class ParkedPollTests: XCTestCase {
    private func park(_ fixture: HubFixture, channel: String) -> (ClientConnection, FakeSink) {
        let sink = FakeSink(instant: fixture.instant)
        let poll = fixture.hub.park(VerifiedIdentity(identity: fixture.donor, expiresAt: .max / 2000), sink: sink, logger: Logger(label: "test"))
        XCTAssertNil(fixture.hub.subscribe(poll, .init(target: .channel(channel))))
        _ = sink.take()
        return (poll, sink)
    }

    func testAParkedPollIsWrittenToWhenAPositionItMaySeeIsKeptAndNotAfterItIsUnparked() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingTakenTo)
        let (poll, sink) = park(fixture, channel: fixture.volunteer)
        fixture.clock.advance(by: 1_000)
        let kept = try XCTUnwrap(try fixture.publish().get().seq)
        XCTAssertEqual(try sink.frames().compactMap { if case .position(let update) = $0 { return update.seq } else { return nil } }, [kept])

        fixture.hub.unpark(poll)
        fixture.clock.advance(by: 1_000)
        XCTAssertEqual(try fixture.publish().get().watchers, 0, "an unparked poll is no subscriber any more")
        XCTAssertTrue(sink.isClosing)
    }

    func testAParkedPollTakesNoConnectionOfItsIdentityAndMakesNobodyOnline() {
        let fixture = HubFixture()
        fixture.move(to: .beingTakenTo)
        var polls: [ClientConnection] = []
        for _ in 0..<fixture.settings.maxConnectionsPerIdentity { polls.append(park(fixture, channel: fixture.volunteer).0) }
        XCTAssertTrue(fixture.hub.mayConnect(fixture.donor), "polls are bounded by their own limits, not the WebSocket's")
        XCTAssertEqual(fixture.metrics.counts.opened, 0)
        for poll in polls { fixture.hub.unpark(poll) }
        XCTAssertEqual(fixture.metrics.counts.closed, 0)
    }

    func testADonationThatEndsWakesItsParkedPoll() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingTakenTo)
        let (_, sink) = park(fixture, channel: fixture.volunteer)
        fixture.move(to: .delivered)
        XCTAssertFalse(try sink.frames().isEmpty, "the poll is told, so that it answers 403 at once")
    }
}
