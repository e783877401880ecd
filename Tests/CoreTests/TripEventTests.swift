import BrokerProtocol
import NIOConcurrencyHelpers
import XCTest

@testable import BrokerCore

/// The events the hub decides from a volunteer's fixes and silences, as a backend would hear them: once each,
/// only inside a trackable window, and never a place.
final class TripEventTests: XCTestCase {
    /// Keeps what the hub records, as the broker's outbox writer would queue it.
    final class RecordingSink: TrackingEventSink {
        private let events = NIOLockedValueBox<[TrackingEvent]>([])
        func record(_ event: TrackingEvent) { events.withLockedValue { $0.append(event) } }
        /// The events recorded since the last call.
        func take() -> [TrackingEvent] { events.withLockedValue { taken in defer { taken = [] }; return taken } }
        func kinds() -> [TrackingEvent.Kind] { take().map(\.kind) }
    }

    private func fixture(_ sink: RecordingSink) -> HubFixture {
        HubFixture(events: TrackingEventRules(sink: sink, approachingMinutes: 5, silentAfterSeconds: 120))
    }

    /// One fix 20 s after the last, `metres` north of home, at 8 m/s.
    private func drive(_ fixture: HubFixture, metres: Double) {
        fixture.clock.advance(by: 20_000)
        XCTAssertEqual(try fixture.publish(metres: metres).get().tracking, true, "the fix at \(metres) m is kept")
    }

    func testAWholeLegToTheHomeTellsFirstPositionApproachingAndArrivedOnce() throws {
        let sink = RecordingSink()
        let fixture = fixture(sink)
        fixture.move(to: .beingLookedFor, incarnation: "i-1")
        drive(fixture, metres: 3_000)
        XCTAssertEqual(sink.kinds(), [.firstPosition(.home)], "3 km at 8 m/s is 6.25 minutes: not yet approaching")
        drive(fixture, metres: 2_330)
        let approaching = sink.take()
        XCTAssertEqual(approaching.map(\.kind), [.approaching(.home, etaMinutes: 5, distanceMeters: 2_300)], "4.9 minutes away")
        XCTAssertEqual(approaching.first?.identity, "d-1|i-1|home|approaching")
        XCTAssertEqual(approaching.first?.at, fixture.clock.now)
        drive(fixture, metres: 1_000)
        XCTAssertEqual(sink.kinds(), [], "approaching is told once per destination")
        drive(fixture, metres: 100)
        XCTAssertEqual(sink.kinds(), [.arrived(.home)])
        drive(fixture, metres: 20)
        XCTAssertEqual(sink.kinds(), [], "arrived is told once")
    }

    func testTheDistanceIsRoundedTo100MetresAndTheMinutesUp() throws {
        XCTAssertEqual(TripEventDetector.roundedTo100(1_249), 1_200)
        XCTAssertEqual(TripEventDetector.roundedTo100(1_251), 1_300)
        XCTAssertEqual(TripEventDetector.roundedTo100(30), 0)
        XCTAssertEqual(TripEventDetector.minutes(241), 5, "4 min 1 s is said as 5 minutes")
        XCTAssertEqual(TripEventDetector.minutes(10), 1, "never 0 minutes")
    }

    func testAnArrivalWithoutAnApproachNeverTellsApproachingAfterIt() throws {
        let sink = RecordingSink()
        let fixture = fixture(sink)
        fixture.move(to: .beingLookedFor)
        drive(fixture, metres: 50)
        XCTAssertEqual(sink.kinds(), [.firstPosition(.home), .arrived(.home)])
        drive(fixture, metres: 400)
        drive(fixture, metres: 300)
        XCTAssertEqual(sink.kinds(), [], "no approaching once arrived")
    }

    func testTheSecondLegToTheInstitutionHasItsOwnEvents() throws {
        let sink = RecordingSink()
        let fixture = fixture(sink)
        fixture.move(to: .beingLookedFor)
        drive(fixture, metres: 50)
        _ = sink.take()
        fixture.move(to: .pickedByVolunteer)
        fixture.move(to: .beingTakenTo)
        drive(fixture, metres: 60)
        XCTAssertEqual(sink.kinds(), [.firstPosition(.institution)], "the institution is kilometres away")
    }

    func testAFixTakenOutsideTheWindowTellsNothing() throws {
        let sink = RecordingSink()
        let fixture = fixture(sink)
        fixture.clock.advance(by: 60_000)
        let before = fixture.clock.now - 10_000
        fixture.move(to: .beingLookedFor)
        XCTAssertEqual(try fixture.publish(metres: 50, takenAt: before).get().tracking, false)
        XCTAssertEqual(sink.kinds(), [], "a fix from before the window is no first position and no arrival")
        fixture.move(to: .pickedByVolunteer)
        fixture.clock.advance(by: 20_000)
        XCTAssertEqual(try fixture.publish(metres: 50).get().tracking, false)
        XCTAssertEqual(sink.kinds(), [], "nothing is told while the trip is paused")
    }

    func testSilenceIsToldOnceInsideTheWindowAndItsEndOnce() throws {
        let sink = RecordingSink()
        let fixture = fixture(sink)
        fixture.move(to: .beingLookedFor)
        fixture.clock.advance(by: 119_000)
        fixture.hub.sweepPresence()
        XCTAssertEqual(sink.kinds(), [], "119 s without a first fix is not yet silent")
        fixture.clock.advance(by: 1_000)
        fixture.hub.sweepPresence()
        XCTAssertEqual(sink.kinds(), [.silent(.home, seconds: 120)], "no fix since the window opened")
        fixture.clock.advance(by: 60_000)
        fixture.hub.sweepPresence()
        XCTAssertEqual(sink.kinds(), [], "one silence is told once")
        drive(fixture, metres: 3_000)
        let back = sink.take()
        XCTAssertEqual(back.map(\.kind), [.back(.home), .firstPosition(.home)])
        XCTAssertNil(back.first?.identity, "silences alternate with their ends; the outbox checks that, not an identity")
        fixture.clock.advance(by: 121_000)
        fixture.hub.sweepPresence()
        XCTAssertEqual(sink.kinds(), [.silent(.home, seconds: 121)], "measured from the last fix")
    }

    func testAPausedTripIsNeverSilentAndTheResumeMeasuresAfresh() throws {
        let sink = RecordingSink()
        let fixture = fixture(sink)
        fixture.move(to: .beingLookedFor)
        drive(fixture, metres: 50)
        _ = sink.take()
        fixture.move(to: .pickedByVolunteer)
        fixture.clock.advance(by: 600_000)
        fixture.hub.sweepPresence()
        XCTAssertEqual(sink.kinds(), [], "ten quiet minutes of hand-over are no silence")
        fixture.move(to: .beingTakenTo)
        fixture.clock.advance(by: 100_000)
        fixture.hub.sweepPresence()
        XCTAssertEqual(sink.kinds(), [], "silence counts from the resume, not from the last fix before the pause")
        fixture.clock.advance(by: 20_000)
        fixture.hub.sweepPresence()
        XCTAssertEqual(sink.kinds(), [.silent(.institution, seconds: 120)])
    }

    func testASilenceAcrossTheHandOverEndsWithBackOnTheNextLeg() throws {
        let sink = RecordingSink()
        let fixture = fixture(sink)
        fixture.move(to: .beingLookedFor)
        fixture.clock.advance(by: 120_000)
        fixture.hub.sweepPresence()
        XCTAssertEqual(sink.kinds(), [.silent(.home, seconds: 120)])
        fixture.move(to: .pickedByVolunteer)
        fixture.move(to: .beingTakenTo)
        drive(fixture, metres: 60)
        XCTAssertEqual(sink.kinds(), [.back(.institution), .firstPosition(.institution)], "the silence told is answered")
    }

    func testAnEndedDonationTellsNothingMore() throws {
        let sink = RecordingSink()
        let fixture = fixture(sink)
        fixture.move(to: .beingLookedFor)
        drive(fixture, metres: 3_000)
        _ = sink.take()
        fixture.move(to: .cancelled)
        fixture.clock.advance(by: 20_000)
        XCTAssertEqual(try fixture.publish(metres: 100).get().tracking, false)
        fixture.clock.advance(by: 600_000)
        fixture.hub.sweepPresence()
        XCTAssertEqual(sink.kinds(), [])
    }

    func testWithoutEventRulesTheHubDecidesNone() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        drive(fixture, metres: 50)
        fixture.hub.channels.locked(fixture.volunteer, create: false) { channel in
            XCTAssertNil(channel?.trip, "a broker that tells nobody keeps no trip state")
        }
    }
}
