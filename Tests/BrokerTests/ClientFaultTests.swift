import BrokerClient
import BrokerProtocol
import DeterministicRandom
import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker
@testable import WatchRendering

/// The client library under network faults: a real broker (heartbeat 1 s), real sockets, and a ``FaultProxy``
/// between the library and the broker that goes silent, resets, or refuses. The volunteer's test connection
/// goes to the broker directly, so only the library's path breaks.
///
/// Each test prints the time the library took to recover (`recovered in`); docs/CLIENTS.md quotes them.
final class ClientFaultTests: XCTestCase {
    /// Fast numbers for tests: a heartbeat of 1 s and backoff up to 1 s.
    static let policy = ConnectionStateMachine.Policy(
        initialDelay: .milliseconds(200), maximumDelay: .seconds(1), assumedHeartbeat: .seconds(1), openTimeout: .seconds(3))

    /// What a watcher yielded, read by the test while it runs.
    final class Recorder: Sendable {
        private let events = NIOLockedValueBox<[DonationEvent]>([])

        var all: [DonationEvent] { events.withLockedValue { $0 } }

        func append(_ event: DonationEvent) { events.withLockedValue { $0.append(event) } }

        /// Waits until an event matches, for at most `limit`; returns how long it took.
        @discardableResult
        func wait(
            for what: String, within limit: Duration = .seconds(15), file: StaticString = #filePath, line: UInt = #line,
            _ matches: @escaping (DonationEvent) -> Bool
        ) async throws -> Duration {
            let start = ContinuousClock.now
            do {
                try await waitUntil(what, deadline: start + limit, poll: .milliseconds(20)) { all.contains(where: matches) }
            } catch let timeout as WaitTimeout {
                XCTFail("no \(what) within \(limit); events: \(all)", file: file, line: line)
                throw timeout
            }
            return ContinuousClock.now - start
        }

        /// The seqs of the positions yielded, in the donor's view.
        var positions: [Int64] { all.compactMap { if case .position(let seq, _) = $0 { seq } else { nil } } }
        /// The positions yielded.
        var fixes: [Position] { all.compactMap { if case .position(_, let fix) = $0 { fix } else { nil } } }
        /// The seq `fix` was yielded under.
        func seq(of fix: Position) -> Int64? { all.lazy.compactMap { if case .position(let seq, fix) = $0 { seq } else { nil } }.first }
    }

    /// A broker, a proxy, a watcher of d-1 through the proxy and a volunteer connected directly.
    final class Scenario: Sendable {
        let broker: NIOLockedValueBox<LiveBroker>
        let proxy: FaultProxy
        let watcher: DonationWatcher
        let recorder = Recorder()
        let run: Task<DonationWatcher.End, Never>
        let reader: Task<Void, Never>

        init(broker: LiveBroker, proxy: FaultProxy, watcher: DonationWatcher) {
            self.broker = NIOLockedValueBox(broker)
            self.proxy = proxy
            self.watcher = watcher
            run = Task { (try? await watcher.run()) ?? .stopped }
            let recorder = recorder
            reader = Task { for await event in watcher { recorder.append(event) } }
        }

        var live: LiveBroker { broker.withLockedValue { $0 } }

        /// Starts the scenario's broker and proxy, both stopped when `test` ends whatever happened.
        static func start(in test: XCTestCase) async throws -> Scenario {
            let live = try await test.startClientBroker()
            try await live.put("d-1", state: .beingLookedFor)
            let proxy = try await FaultProxy.start(target: live.port)
            test.addTeardownBlock { await proxy.stop() }
            let watcher = DonationWatcher(
                url: proxy.webSocketURL, target: .donation("d-1"), options: .init(policy: policy, subscribeTimeout: .seconds(3))
            ) { try await LiveBroker.token("donor@example.org") }
            return Scenario(broker: live, proxy: proxy, watcher: watcher)
        }

        /// Stops everything it started, whatever happened; fails if the watcher does not end once cancelled.
        func stop() async throws {
            run.cancel()
            defer { reader.cancel() }
            _ = try await run.value(waitingFor: "the watcher ended once cancelled")
            try await reader.value(waitingFor: "the watcher's events ended")
            await proxy.stop()
            try await live.stop()
        }
    }

    /// Runs `body` with a started scenario and always stops it.
    private func withScenario(_ body: (Scenario) async throws -> Void) async throws {
        let scenario = try await Scenario.start(in: self)
        do {
            try await body(scenario)
        } catch {
            try? await scenario.stop()
            throw error
        }
        try await scenario.stop()
    }

    /// How tracker-watch's plain output shows `fix`: its latitude, by the watcher's own formatter.
    private static func shown(_ fix: Position) -> String {
        "lat=\(PlainFormatter.coordinate(fix.lat)) "
    }

    private func isPosition(_ fix: Position) -> (DonationEvent) -> Bool {
        { if case .position(_, fix) = $0 { true } else { false } }
    }

    /// Connects the volunteer, waits for the watcher's subscription and shows one position.
    private func begin(_ scenario: Scenario) async throws -> (BrokerConnection, Position) {
        let volunteer = try await scenario.live.connect("vol@example.org")
        try await scenario.recorder.wait(for: "connected") { $0 == .connection(.connected) }
        let first = try await volunteer.publishKept(position(metresFromHome: 1_500))
        try await scenario.recorder.wait(for: "the first position", isPosition(first))
        return (volunteer, first)
    }

    /// After a fault: a position published now must reach the watcher; returns the time it took.
    private func recover(_ scenario: Scenario, volunteer: BrokerConnection, after first: Position, fault: String, within limit: Duration) async throws {
        let start = ContinuousClock.now
        let next = try await volunteer.publishKept(position(metresFromHome: 1_000))
        try await scenario.recorder.wait(for: "the position published after the \(fault)", within: limit, isPosition(next))
        let took = ContinuousClock.now - start
        print("ClientFaultTests: \(fault): recovered in \(took)")
        XCTAssertTrue(scenario.recorder.all.contains { if case .connection(.reconnecting) = $0 { true } else { false } })
        let firstSeq = try XCTUnwrap(scenario.recorder.seq(of: first))
        XCTAssertTrue(scenario.recorder.all.contains(.connection(.reconnected(since: firstSeq))), "resumed with since = \(firstSeq)")
        XCTAssertEqual(scenario.recorder.positions, scenario.recorder.positions.sorted(), "seq order")
        XCTAssertEqual(Set(scenario.recorder.positions).count, scenario.recorder.positions.count, "each seq once")
    }

    /// A slow path (400 ms each way, so a ping's answer takes 800 ms of a 1 s heartbeat): nothing is taken for
    /// dead, and every position arrives once, in order, late by the delay.
    func testADelayedPathDeliversEveryPositionInOrderWithoutReconnecting() async throws {
        try await withScenario { scenario in
            let (volunteer, first) = try await begin(scenario)
            scenario.proxy.delay = .milliseconds(400)
            var published = [first]
            for step in 0..<5 {
                published.append(try await volunteer.publishKept(position(metresFromHome: 1_400 - Double(step) * 50)))
            }
            let took = try await scenario.recorder.wait(for: "the last delayed position", within: .seconds(10), isPosition(published.last!))
            print("ClientFaultTests: delayed path (400 ms each way): the last position arrived \(took) after the volunteer had its ack")
            // Two heartbeats more on the slow path: the keepalive must not take it for dead.
            try await Task.sleep(for: .seconds(2))
            XCTAssertEqual(scenario.recorder.fixes, published)
            XCTAssertFalse(scenario.recorder.all.contains { if case .connection(.reconnecting) = $0 { true } else { false } }, "\(scenario.recorder.all)")
            await volunteer.close()
        }
    }

    /// The silent path: no FIN, no RST. Two heartbeats (2 s) of silence, plus the backoff (up to 1 s).
    func testASilentPathIsLeftAndAPositionPublishedAfterTheCutArrives() async throws {
        try await withScenario { scenario in
            let (volunteer, first) = try await begin(scenario)
            scenario.proxy.silence()
            try await recover(scenario, volunteer: volunteer, after: first, fault: "silent path", within: .seconds(2 + 1 + 3))
            try await scenario.live.put("d-1", state: .pickedByVolunteer)
            try await scenario.recorder.wait(for: "the pause") { $0 == .paused(.pickedByVolunteer) }
            try await scenario.live.put("d-1", state: .beingTakenTo)
            try await scenario.recorder.wait(for: "the resume") { $0 == .resumed(.beingTakenTo, destination: .institution) }
            try await scenario.live.put("d-1", state: .delivered)
            try await scenario.recorder.wait(for: "delivered") { $0 == .ended(.unsubscribed(.delivered)) }
            let end = try await scenario.run.value(waitingFor: "the watcher ended on delivered")
            XCTAssertEqual(end, .unsubscribed(.delivered))
            await volunteer.close()
        }
    }

    func testAResetConnectionIsReopenedAtOnce() async throws {
        try await withScenario { scenario in
            let (volunteer, first) = try await begin(scenario)
            await scenario.proxy.reset()
            try await recover(scenario, volunteer: volunteer, after: first, fault: "reset", within: .seconds(1 + 3))
            await volunteer.close()
        }
    }

    func testRefusedConnectionsAreRetriedUntilTheyAreAcceptedAgain() async throws {
        try await withScenario { scenario in
            let (volunteer, first) = try await begin(scenario)
            scenario.proxy.refuse(for: .seconds(10))
            let acceptedBefore = scenario.proxy.accepted
            await scenario.proxy.reset()
            try await recover(scenario, volunteer: volunteer, after: first, fault: "10 s of refusal", within: .seconds(10 + 1 + 3))
            XCTAssertGreaterThan(scenario.proxy.accepted - acceptedBefore, 5, "it kept trying while refused, with a capped backoff")
            await volunteer.close()
        }
    }

    func testABrokerRestartIsFollowedAndPositionsResume() async throws {
        try await withScenario { scenario in
            let (volunteer, first) = try await begin(scenario)
            await volunteer.close()
            let old = scenario.live
            try await old.stop()
            let restarted = try await startBroker(database: old.database) {
                $0.heartbeatSeconds = 1
                $0.publishRate = 1000
                $0.publishBurst = 1000
            }
            scenario.broker.withLockedValue { $0 = restarted }
            scenario.proxy.target = restarted.port
            let again = try await restarted.connect("vol@example.org")
            try await recover(scenario, volunteer: again, after: first, fault: "broker restart", within: .seconds(1 + 3))
            await again.close()
        }
    }

    /// The acceptance check: `tracker-watch --plain` through a path that goes silent, with the broker's
    /// heartbeat at 5 s, shows a newer position within 30 s (its first connection pings every 10 s: the policy's
    /// assumption before any `welcome`).
    func testTrackerWatchThroughASilentPathShowsANewerPositionWithin30Seconds() async throws {
        let live = try await startClientBroker(heartbeatSeconds: 5)
        try await live.put("d-1", state: .beingLookedFor)
        let proxy = try await FaultProxy.start(target: live.port)
        addTeardownBlock { await proxy.stop() }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("watch-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let file = try FileHandle(forWritingTo: output)
        let watcher = Process()
        watcher.executableURL = try await BrokerProcess.executable("tracker-watch")
        watcher.arguments = [
            "--broker", "ws://127.0.0.1:\(proxy.port)", "--token", try await LiveBroker.token("donor@example.org"), "--donation", "d-1", "--plain",
        ]
        watcher.standardOutput = file
        watcher.standardError = file
        try watcher.run()
        terminateAtTeardown(watcher)
        let text = { String(decoding: (try? Data(contentsOf: output)) ?? Data(), as: UTF8.self) }
        do {
            let volunteer = try await live.connect("vol@example.org")
            try await waitUntil("tracker-watch subscribed") { text().contains(" subscribed ") }
            let first = try await volunteer.publishKept(position(metresFromHome: 1_500))
            try await waitUntil("the first position shown") { text().contains(Self.shown(first)) }
            proxy.silence()
            let cut = ContinuousClock.now
            let next = try await volunteer.publishKept(position(metresFromHome: 1_200))
            // On a timeout the assertion below shows what the watcher printed.
            try? await waitUntil("a newer position shown", deadline: cut + .seconds(30), poll: .milliseconds(100)) { text().contains(Self.shown(next)) }
            let took = ContinuousClock.now - cut
            XCTAssertTrue(text().contains(Self.shown(next)), "no newer position within 30 s:\n\(text())")
            print("ClientFaultTests: tracker-watch, silent path, heartbeat 5 s: recovered in \(took)")
            try await live.put("d-1", state: .cancelled)
            try await waitUntil("tracker-watch exited") { !watcher.isRunning }
            XCTAssertEqual(watcher.terminationStatus, 1, text())
            await volunteer.close()
        } catch {
            XCTFail("\(error):\n\(text())")
        }
        if watcher.isRunning { watcher.terminate() }
        try? file.close()
        await proxy.stop()
        try await live.stop()
    }

    /// A whole trip under seeded random faults (silence, reset, a short refusal): every position the broker kept is
    /// yielded once, in seq order, and the sequence ends with delivered.
    func testAWholeTripUnderRandomFaultsYieldsEveryKeptPositionOnceInOrder() async throws {
        try await withScenario { scenario in
            var random = SeededRandom(seed: 14)
            let (volunteer, first) = try await begin(scenario)
            var kept: [Position] = [first]
            var metres = 1_400.0
            for step in 0..<24 {
                if step % 4 == 3 {
                    switch random.next() % 3 {
                    case 0: scenario.proxy.silence()
                    case 1: await scenario.proxy.reset()
                    default:
                        scenario.proxy.refuse(for: .milliseconds(800))
                        await scenario.proxy.reset()
                    }
                }
                kept.append(try await volunteer.publishKept(position(metresFromHome: metres)))
                metres -= 40
                try await Task.sleep(for: .milliseconds(Int64(100 + random.next() % 200)))
            }
            let expected = kept
            try await scenario.recorder.wait(for: "every kept position", within: .seconds(20)) { _ in
                Set(scenario.recorder.fixes.map(\.timestamp)).isSuperset(of: expected.map(\.timestamp))
            }
            // The trip goes on: a pause, a resume, one more position, delivered.
            try await scenario.live.put("d-1", state: .pickedByVolunteer)
            try await scenario.live.put("d-1", state: .beingTakenTo)
            try await scenario.recorder.wait(for: "the resume") { $0 == .resumed(.beingTakenTo, destination: .institution) }
            kept.append(try await volunteer.publishKept(position(metresFromHome: 500)))
            let last = try XCTUnwrap(kept.last)
            try await scenario.recorder.wait(for: "the position after the resume", isPosition(last))
            try await scenario.live.put("d-1", state: .delivered)
            let end = try await scenario.run.value(waitingFor: "the watcher ended on delivered")
            try await scenario.reader.value(waitingFor: "every event recorded")
            XCTAssertEqual(end, .unsubscribed(.delivered))
            XCTAssertEqual(scenario.recorder.fixes, kept, "every kept position once, in order")
            XCTAssertEqual(scenario.recorder.positions, scenario.recorder.positions.sorted(), "in seq order")
            XCTAssertEqual(scenario.recorder.all.last, .ended(.unsubscribed(.delivered)))
            let reconnects = scenario.recorder.all.filter { if case .connection(.reconnected) = $0 { true } else { false } }.count
            XCTAssertGreaterThanOrEqual(reconnects, 2, "the faults did cut the watcher off (a fault that lands while it is already reconnecting cuts nothing)")
            await volunteer.close()
        }
    }
}

extension XCTestCase {
    /// A broker for the client library's tests: a short heartbeat (so a silent path is found in seconds) and a
    /// publish rate no test reaches. Stopped when the test ends.
    func startClientBroker(heartbeatSeconds: Int = 1) async throws -> LiveBroker {
        try await startBroker {
            $0.heartbeatSeconds = heartbeatSeconds
            $0.publishRate = 1000
            $0.publishBurst = 1000
        }
    }
}
