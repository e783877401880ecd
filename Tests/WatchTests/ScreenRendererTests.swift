import BrokerProtocol
import WatchRendering
import XCTest

/// Properties every screen keeps, at every size: fits the terminal, colour only on request, nothing unsafe.
final class ScreenRendererTests: XCTestCase {
    private let renderer = ScreenRenderer()

    private var situations: [(String, WatchState, Int64)] {
        [
            ("waiting", Fixtures.waiting()), ("heading home", Fixtures.headingHome()), ("stale", Fixtures.stale()),
            ("paused", Fixtures.paused()), ("institution", Fixtures.headingToInstitution()), ("delivered", Fixtures.delivered()),
            ("reconnecting", Fixtures.reconnecting()), ("connecting", (WatchState(request: .channel("vol@example.org")), Fixtures.start)),
        ].map { ($0.0, $0.1.0, $0.1.1) }
    }

    /// Visible columns of a line, without its ANSI SGR sequences.
    private func visibleColumns(_ line: String) -> Int {
        var text = ""
        var inEscape = false
        for character in line {
            if character == "\u{1B}" {
                inEscape = true
            } else if inEscape {
                if character == "m" { inEscape = false }
            } else {
                text.append(character)
            }
        }
        return TerminalText.columns(of: text)
    }

    func testEveryLineFitsAtEverySize() {
        for (name, state, now) in situations {
            let model = WatchViewModel(state: state, now: now)
            for width in [0, 1, 2, 5, 10, 20, 29, 30, 39, 40, 41, 55, 69, 70, 80, 99, 100, 132, 200] {
                for height in [0, 1, 2, 3, 8, 11, 12, 15, 16, 20, 24, 50] {
                    for options in [RenderOptions(), RenderOptions(ascii: true), RenderOptions(colour: true)] {
                        let lines = renderer.render(model, width: width, height: height, options: options)
                        XCTAssertLessThanOrEqual(lines.count, height, "\(name) \(width)x\(height)")
                        for line in lines {
                            XCTAssertLessThanOrEqual(visibleColumns(line), width, "\(name) \(width)x\(height) \(options): \(line)")
                        }
                    }
                }
            }
        }
    }

    func testColourOnlyWhenAskedAndASCIIOnlyInASCIIMode() {
        for (name, state, now) in situations {
            let model = WatchViewModel(state: state, now: now)
            let plain = renderer.render(model, width: 80, height: 24, options: RenderOptions())
            XCTAssertFalse(plain.joined().contains("\u{1B}"), name)
            let coloured = renderer.render(model, width: 80, height: 24, options: RenderOptions(colour: true))
            XCTAssertTrue(coloured.joined().contains("\u{1B}[1;7m"), name)
            let ascii = renderer.render(model, width: 80, height: 24, options: RenderOptions(ascii: true))
            XCTAssertTrue(ascii.joined().allSatisfy(\.isASCII), "\(name): \(ascii.joined(separator: "\n"))")
        }
    }

    func testTheDestinationStandsOutInBracketsAndInColour() {
        let (state, now) = Fixtures.headingHome()
        let model = WatchViewModel(state: state, now: now)
        let plain = renderer.render(model, width: 80, height: 24, options: RenderOptions()).joined(separator: "\n")
        XCTAssertTrue(plain.contains("[H]"))
        XCTAssertFalse(plain.contains("[I]"))
        let coloured = renderer.render(model, width: 80, height: 24, options: RenderOptions(colour: true)).joined()
        XCTAssertTrue(coloured.contains("\u{1B}[1;32m[H]"), "the destination is drawn bold green")
    }

    func testTheVolunteerArrowFollowsTheHeading() {
        let expected: [(Double, Character, Character)] = [
            (0, "↑", "^"), (45, "↗", "/"), (90, "→", ">"), (135, "↘", "\\"), (180, "↓", "v"), (225, "↙", "/"), (270, "←", "<"), (315, "↖", "\\"),
        ]
        for (heading, unicode, ascii) in expected {
            var state = Fixtures.state([Fixtures.subscribed(.beingLookedFor)])
            state.apply(Fixtures.position(seq: 1, lat: -34.62, lon: -58.37, at: Fixtures.start, heading: heading), now: Fixtures.start)
            let model = WatchViewModel(state: state, now: Fixtures.start)
            let screen = renderer.render(model, width: 80, height: 24, options: RenderOptions()).joined()
            XCTAssertTrue(screen.contains(unicode), "heading \(heading)")
            let asciiScreen = renderer.render(model, width: 80, height: 24, options: RenderOptions(ascii: true)).joined()
            XCTAssertTrue(asciiScreen.contains(ascii), "heading \(heading)")
        }
    }

    func testWithoutAReportedHeadingTheArrowFollowsTheLastMove() {
        let (state, now) = Fixtures.headingToInstitution()
        // The fixture reports no heading; the volunteer moves about west-north-west.
        XCTAssertEqual(WatchViewModel(state: state, now: now).heading.map(WatchFormat.compassIndex), 7)
    }

    func testALabelCannotWriteEscapeSequences() {
        var state = WatchState(request: .donation("d-1"))
        state.apply(
            .subscribed(.init(
                re: nil, channel: "vol@example.org", donation: "d-1", state: .beingLookedFor, tracking: true, destination: .home,
                home: Home(lat: -34.6, lon: -58.38, label: "\u{1B}]0;owned\u{7}\u{1B}[2J 東京 \u{202E}x"), institution: nil, last: nil,
                online: true)),
            now: Fixtures.start)
        let lines = renderer.render(WatchViewModel(state: state, now: Fixtures.start), width: 80, height: 24, options: RenderOptions())
        XCTAssertFalse(lines.joined().contains("\u{1B}"))
        XCTAssertFalse(lines.joined().contains("\u{7}"))
        XCTAssertTrue(lines.joined().contains("東京"), "wide characters are kept")
    }

    func testTheTinyLayoutAsksForMoreRoom() {
        let (state, now) = Fixtures.headingHome()
        let lines = renderer.render(WatchViewModel(state: state, now: now), width: 39, height: 30, options: RenderOptions())
        XCTAssertEqual(lines.last, "Enlarge to 40x12 for the map")
        XCTAssertFalse(lines.joined().contains("[H]"))
    }
}
