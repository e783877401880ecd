import BrokerProtocol
import WatchRendering
import XCTest

/// The screens a donor sees, at fixed times and positions, rendered without colour and compared with goldens.
final class GoldenScreenTests: XCTestCase {
    private let renderer = ScreenRenderer()

    private func render(_ situation: (WatchState, Int64), width: Int = 80, height: Int = 24, ascii: Bool = false) -> [String] {
        let model = WatchViewModel(state: situation.0, now: situation.1)
        return renderer.render(model, width: width, height: height, options: RenderOptions(ascii: ascii, colour: false))
    }

    func testWaitingForTheFirstFix() {
        GoldenScreen.assert(render(Fixtures.waiting()), matches: GoldenScreens.waiting, name: "waiting")
    }

    func testHeadingHome() {
        GoldenScreen.assert(render(Fixtures.headingHome()), matches: GoldenScreens.headingHome, name: "headingHome")
    }

    func testStaleFix() {
        GoldenScreen.assert(render(Fixtures.stale()), matches: GoldenScreens.stale, name: "stale")
    }

    func testArrivedAtHome() {
        GoldenScreen.assert(render(Fixtures.arrived()), matches: GoldenScreens.arrived, name: "arrived")
    }

    func testPausedAfterPickUp() {
        GoldenScreen.assert(render(Fixtures.paused()), matches: GoldenScreens.paused, name: "paused")
    }

    func testHeadingToTheInstitution() {
        GoldenScreen.assert(render(Fixtures.headingToInstitution()), matches: GoldenScreens.headingToInstitution, name: "headingToInstitution")
    }

    func testEndedDelivered() {
        GoldenScreen.assert(render(Fixtures.delivered()), matches: GoldenScreens.delivered, name: "delivered")
    }

    func testTinyTerminal() {
        GoldenScreen.assert(render(Fixtures.headingHome(), width: 30, height: 8), matches: GoldenScreens.tiny30x8, name: "tiny30x8")
    }

    func testASCIIMode() {
        GoldenScreen.assert(render(Fixtures.headingHome(), ascii: true), matches: GoldenScreens.headingHomeASCII, name: "headingHomeASCII")
    }

    func testReconnectingInTheStackedLayout() {
        GoldenScreen.assert(render(Fixtures.reconnecting(), width: 60, height: 20), matches: GoldenScreens.reconnecting60x20, name: "reconnecting60x20")
    }
}
