import BrokerClient
import BrokerProtocol
import Foundation
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker

/// `tracker-watch` against a live broker and a simulated volunteer: the donor's terminal follows the whole
/// trip and exits 0 when the donation is delivered.
final class WatcherEndToEndTests: XCTestCase {
    /// Drives one delivery while `watch` runs; returns once DELIVERED was sent.
    private func driveDelivery(_ live: LiveBroker, watcherSubscribed: () async throws -> Void) async throws {
        let volunteer = try await live.connect("vol@example.org")
        try await watcherSubscribed()
        for metres in stride(from: 1_500.0, through: 100, by: -350) {
            _ = try await volunteer.publish(position(metresFromHome: metres))
        }
        try await live.put("d-1", state: .pickedByVolunteer)
        try await live.put("d-1", state: .beingTakenTo)
        let institution = LiveBroker.institution
        _ = try await volunteer.publish(Position(lat: institution.lat + 0.0004, lon: institution.lon, speed: 3, heading: 180, timestamp: WallClock.system.now()))
        try await live.put("d-1", state: .delivered)
        await volunteer.close()
    }

    /// Waits until the broker has a subscriber on the volunteer's channel (the watcher's).
    private func waitForSubscriber(_ live: LiveBroker) async throws {
        try await waitUntil("the watcher subscribed", deadline: .now + .seconds(30), poll: .milliseconds(20)) {
            (live.metric(#"broker_frames_in_total{type="subscribe"}"#) ?? 0) >= 1
        }
    }

    func testThePlainWatcherFollowsTheTripAndExitsZeroOnDelivery() async throws {
        let live = try await startBroker { $0.publishRate = 1000; $0.publishBurst = 1000 }
        try await live.put("d-1", state: .beingLookedFor)
        let watcher = Process()
        watcher.executableURL = try await BrokerProcess.executable("tracker-watch")
        watcher.arguments = ["--broker", "ws://127.0.0.1:\(live.port)", "--token", try await LiveBroker.token("donor@example.org"), "--donation", "d-1", "--plain"]
        let output = Pipe()
        watcher.standardOutput = output
        watcher.standardError = output
        try watcher.run()
        terminateAtTeardown(watcher)

        try await driveDelivery(live) { try await waitForSubscriber(live) }
        let reading = output.fileHandleForReading
        let text = try await blocking("tracker-watch exits", deadline: .now + .seconds(30)) {
            String(decoding: reading.readDataToEndOfFile(), as: UTF8.self)
        }
        try await waitUntil("tracker-watch exited") { !watcher.isRunning }
        XCTAssertEqual(watcher.terminationStatus, 0, text)
        for expected in [" subscribed ", " position seq=", " arrival place=home", " pause ", " resume ", " arrival place=institution", " ended "] {
            XCTAssertTrue(text.contains(expected), "no \(expected.trimmingCharacters(in: .whitespaces)) line in:\n\(text)")
        }
        try await live.stop()
    }

    func testTheFullScreenWatcherDrawsTheMapInATerminal() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            throw XCTSkip("tmux is not installed (CI installs it)")
        }
        let live = try await startBroker { $0.publishRate = 1000; $0.publishBurst = 1000 }
        try await live.put("d-1", state: .beingLookedFor)
        let session = "watch"
        let tmux = Tmux()
        let command = "\(try await BrokerProcess.executable("tracker-watch").path) --broker ws://127.0.0.1:\(live.port) --token \(try await LiveBroker.token("donor@example.org")) --donation d-1; sleep 30"
        addTeardownBlock { await tmux.killServer() }
        try await tmux.run(["new-session", "-d", "-s", session, "-x", "80", "-y", "24", command])
        try await waitForSubscriber(live)
        let volunteer = try await live.connect("vol@example.org")
        _ = try await volunteer.publish(position(metresFromHome: 1_200))
        // Redraws happen on every update and once a second; wait for the map to show the volunteer.
        // On a timeout the assertions below show the screen.
        var screen = ""
        try? await waitUntil("the map shows the volunteer", poll: .milliseconds(100)) {
            screen = try await tmux.run(["capture-pane", "-p", "-t", session])
            return screen.contains("Distance") && screen.contains("1.2 km")
        }
        XCTAssertTrue(screen.contains("On the way to your home"), screen)
        XCTAssertTrue(screen.contains("1.2 km"), screen)
        XCTAssertTrue(screen.contains("N↑"), "north is marked:\n\(screen)")
        await volunteer.close()
        try await live.stop()
    }
}
