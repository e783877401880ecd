import BrokerProtocol
import WatchRendering
import XCTest

/// Plain mode: one line per event with the same facts as the screen.
final class PlainFormatterTests: XCTestCase {
    private let formatter = PlainFormatter()
    private let t0 = Fixtures.start

    func testAPositionLineHasEveryFact() {
        let (state, now) = Fixtures.headingHome()
        let seq = state.fix?.seq ?? 0
        let line = formatter.positionLine(WatchViewModel(state: state, now: now), seq: seq, state: state, now: now)
        XCTAssertEqual(
            line,
            "2026-11-21T22:01:44Z position seq=106 lat=-34.60837 lon=-58.37832 distance=600 m bearing=330° (NW) speed=30 km/h eta=2 min accuracy=5 m age=4 s"
        )
    }

    func testAStalePositionSaysSo() {
        let (state, now) = Fixtures.stale()
        let line = formatter.positionLine(WatchViewModel(state: state, now: now), seq: 106, state: state, now: now)
        XCTAssertTrue(line.hasSuffix("age=1 min STALE"), line)
    }

    func testEventLines() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        let arrival = state.apply(.arrival(.init(channel: Fixtures.channel, donation: Fixtures.donation, place: .home, distance: 85.2)), now: t0 + 190_000)
        XCTAssertEqual(
            formatter.lines(for: arrival, state: state, now: t0 + 190_000),
            ["2026-11-21T22:03:10Z arrival place=home distance=85 m -- The volunteer has arrived at your home (85 m away)"])
        let pause = state.apply(Fixtures.stateChange(.pickedByVolunteer), now: t0 + 200_000)
        XCTAssertEqual(
            formatter.lines(for: pause, state: state, now: t0 + 200_000),
            [
                "2026-11-21T22:03:20Z pause state=PICKED-BY-VOLUNTEER tracking=false destination=none -- Tracking paused: Picked up — waiting for your confirmation"
            ])
        let end = state.apply(.unsubscribed(.init(re: nil, channel: Fixtures.channel, donation: Fixtures.donation, reason: .cancelled)), now: t0 + 300_000)
        XCTAssertEqual(
            formatter.lines(for: end, state: state, now: t0 + 300_000),
            ["2026-11-21T22:05:00Z ended reason=CANCELLED -- The donation was cancelled; tracking has ended."])
    }

    func testSubscribedWithALastFixPrintsTheEventThenThePosition() {
        var state = WatchState(request: .donation(Fixtures.donation))
        let last = ServerFrame.KeptPosition(seq: 7, position: Position(lat: -34.61, lon: -58.38, accuracy: 4, speed: 5, heading: 10, timestamp: t0 - 2000))
        let update = state.apply(Fixtures.subscribed(.beingLookedFor, last: last), now: t0)
        let lines = formatter.lines(for: update, state: state, now: t0)
        XCTAssertEqual(lines.count, 2)
        XCTAssertEqual(
            lines.first,
            "2026-11-21T22:00:00Z subscribed donation=d-1 channel=vol@example.org state=BEING-LOOKED-FOR destination=home online=true -- Watching donation d-1: On the way to your home"
        )
        XCTAssertEqual(lines.last?.hasPrefix("2026-11-21T22:00:00Z position seq=7 lat=-34.61 lon=-58.38 distance="), true, lines.last ?? "")
    }

    func testUnknownValuesAreDashesAndASCIIModeIsASCII() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        let update = state.apply(Fixtures.position(seq: 1, lat: -34.62, lon: -58.38, at: t0, speed: nil, heading: nil, accuracy: nil), now: t0)
        let line = formatter.lines(for: update, state: state, now: t0).last ?? ""
        XCTAssertTrue(line.contains(" speed=- eta=- accuracy=- age=0 s"), line)
        let ascii = PlainFormatter(ascii: true).lines(for: update, state: state, now: t0).last ?? ""
        XCTAssertTrue(ascii.contains("bearing=355 deg (N)"), ascii)
        XCTAssertTrue(ascii.allSatisfy(\.isASCII), ascii)
    }

    func testLinkEventLines() {
        var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
        let lost = state.apply(.lost(reason: "the token expired (4001)"), now: t0)
        XCTAssertEqual(
            formatter.lines(for: lost, state: state, now: t0),
            ["2026-11-21T22:00:00Z connection reason=the token expired (4001) -- Connection lost: the token expired (4001); reconnecting"])
        let retry = state.apply(.retrying(attempt: 2, at: t0 + 1_049, reason: "connection refused"), now: t0)
        XCTAssertEqual(
            formatter.lines(for: retry, state: state, now: t0),
            ["2026-11-21T22:00:00Z retry attempt=2 in=1.0 s reason=connection refused -- Reconnecting in 1.0 s (try 2)"])
        XCTAssertEqual(state.log.last?.kind, .connection, "retries stay out of the event log")
        let again = state.apply(.resubscribing(since: 42), now: t0)
        XCTAssertEqual(
            formatter.lines(for: again, state: state, now: t0),
            ["2026-11-21T22:00:00Z reconnect since=42 -- Reconnected; asking for the positions missed since seq 42"])
    }
}
