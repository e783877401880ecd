import BrokerProtocol
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// The publish rate limit holds for every volunteer, also one who has no donation and no open socket.
final class PublishRateLimitTests: XCTestCase {
    func testTheRateLimitHoldsForAVolunteerWithNoDonationPublishingWithoutASocket() throws {
        let clock = ManualClock(start: 1_795_000_000_000)
        let hub = Hub(settings: HubSettings(), metrics: BrokerMetrics(), clock: { clock.now })
        func publish() -> Bool {
            (try? hub.publish(as: "vol@example.org", position: position(metresFromHome: 900, timestamp: clock.now)).get()) != nil
        }
        // Over HTTP (OwnTracks) the volunteer holds no connection, so nothing else keeps their channel.
        XCTAssertEqual((0..<7).map { _ in publish() }, [true, true, true, true, true, false, false], "a burst of 5, then rate-limited")
        clock.advance(by: 1_000)
        XCTAssertTrue(publish(), "one more token a second")
        XCTAssertFalse(publish())
        // Once the bucket has refilled, the sweeper forgets the channel: nothing grows per volunteer.
        clock.advance(by: 10_000)
        hub.sweepPresence()
        XCTAssertEqual(hub.channelCount, 0)
    }
}
