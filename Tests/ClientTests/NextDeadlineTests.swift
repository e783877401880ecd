import BrokerProtocol
import DeterministicRandom
import XCTest

@testable import BrokerClient

/// When the client's loops must wake: the pure rules tell the next instant something is due, so a connected, idle
/// client sleeps instead of looking four times a second. A hand-moved clock, no sockets.
final class NextDeadlineTests: XCTestCase {
    private let t0 = ContinuousClock.now
    private let policy = ConnectionStateMachine.Policy(
        initialDelay: .milliseconds(500), maximumDelay: .seconds(15), assumedHeartbeat: .seconds(10), openTimeout: .seconds(10))

    func testOnlyTheWelcomeDeadlineAndTheBackoffsEndAreDueAndAWelcomedConnectionHasNone() {
        var machine = ConnectionStateMachine(policy: policy, random: FixedRandom(value: .max))
        XCTAssertNil(machine.nextDeadline, "idle: nothing is due")
        _ = machine.start()
        XCTAssertNil(machine.nextDeadline, "connecting: the attempt itself has its timeout")
        machine.opened(now: t0)
        XCTAssertEqual(machine.nextDeadline, t0 + .seconds(10), "the welcome is awaited until the open timeout")
        XCTAssertEqual(machine.tick(now: t0 + .seconds(10)), .closeDead(reason: "no welcome within 10 s of opening"), "and it is due then")
        machine.welcomed(heartbeatSeconds: 30)
        XCTAssertNil(machine.nextDeadline, "welcomed: only a frame, the socket's end or the app's word can change anything")
        guard case .wait(let delay, _, _) = machine.ended(.closed(code: 1001, reason: nil), now: t0 + .seconds(60)) else {
            return XCTFail("a lost connection waits")
        }
        XCTAssertEqual(machine.nextDeadline, t0 + .seconds(60) + delay, "the backoff's end")
        _ = machine.delayElapsed()
        XCTAssertNil(machine.nextDeadline)
        machine.stop()
        XCTAssertNil(machine.nextDeadline)
    }

    func testStalenessIsDueOnceAtTheFirstStaleMillisecondAndNotWhilePausedOrAnnounced() {
        var tracker = DonationTracker(staleAfterMilliseconds: 60_000)
        let home = Home(lat: -34.6, lon: -58.4, label: nil)
        let subscribed = ServerFrame.Subscribed(
            re: "s1", channel: "vol@example.org", donation: "d-1", state: .beingLookedFor, tracking: true, destination: .home, home: home,
            institution: nil, last: nil, online: true)
        _ = tracker.subscribed(subscribed, since: nil)
        XCTAssertNil(tracker.nextStaleness, "no position yet: nothing can grow stale")
        let fix = Position(lat: -34.6, lon: -58.4, timestamp: 1_000_000)
        _ = tracker.apply(.position(.init(channel: "vol@example.org", seq: 1, position: fix)))
        let due = 1_000_000 + 60_001 as Int64
        XCTAssertEqual(tracker.nextStaleness, due)
        XCTAssertEqual(tracker.tick(now: due - 1), [], "not a millisecond early")
        XCTAssertEqual(tracker.tick(now: due), [.stale(lastFix: 1_000_000)], "due when it says")
        XCTAssertNil(tracker.nextStaleness, "announced once: nothing more is due")
        _ = tracker.apply(.position(.init(channel: "vol@example.org", seq: 2, position: Position(lat: -34.6, lon: -58.4, timestamp: 1_070_000))))
        XCTAssertEqual(tracker.nextStaleness, 1_070_000 + 60_001, "a fresh position starts the count again")
        _ = tracker.apply(.state(.init(channel: "vol@example.org", donation: "d-1", state: .pickedByVolunteer)))
        XCTAssertNil(tracker.nextStaleness, "paused: nothing grows stale")
    }

    func testAWaitWithNoDeadlineEndsOnlyWithAnEventOrAnInterruptionAndAnEarlyInterruptionIsNotLost() async throws {
        let queue = EventQueue(limit: 16)
        // Interrupted before anyone waits (between a loop's last look and its wait): the next wait ends at once.
        queue.interrupt()
        let early = await queue.next(until: nil)
        XCTAssertNil(early)
        let reader = Task { await queue.next(until: nil) }
        try await waitUntil { queue.waitingReaders == 1 }
        try await Task.sleep(for: .milliseconds(300))
        XCTAssertEqual(queue.waitingReaders, 1, "no deadline: no timer ends the wait")
        queue.interrupt()
        let interrupted = await reader.value
        XCTAssertNil(interrupted)
        let next = Task { await queue.next(until: nil) }
        try await waitUntil { queue.waitingReaders == 1 }
        queue.push(.closed(code: 1000, reason: nil))
        let event = await next.value
        XCTAssertEqual(event, .closed(code: 1000, reason: nil))
    }

    func testANapWithNoDeadlineLastsUntilTheAppsWord() async throws {
        let control = LinkControl()
        let napping = Task {
            await control.nap(until: nil)
            return ContinuousClock.now
        }
        try await Task.sleep(for: .milliseconds(300))
        let word = ContinuousClock.now
        control.networkAvailable()
        let woke = await napping.value
        XCTAssertGreaterThanOrEqual(woke, word, "slept until the word, with no deadline")
        XCTAssertEqual(control.takeNudge(), .connectivity)
    }

    func testAWordReachesTheLoopWaitingOnAnOpenConnection() async throws {
        let control = LinkControl()
        let queue = EventQueue(limit: 16)
        control.serving { queue.interrupt() }
        let reader = Task { await queue.next(until: nil) }
        try await waitUntil { queue.waitingReaders == 1 }
        control.reconnect()
        let woke = await reader.value
        XCTAssertNil(woke, "woken to look at the word")
        control.serving(nil)
        control.foreground()
        XCTAssertEqual(queue.count, 0)
        let after = Task { await queue.next(until: nil) }
        try await waitUntil { queue.waitingReaders == 1 }
        XCTAssertEqual(queue.waitingReaders, 1, "no hook once the loop left the connection: the word went to nobody's wait")
        queue.push(.closed(code: 1000, reason: nil))
        _ = await after.value
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while !condition() {
            guard ContinuousClock.now < deadline else { return XCTFail("not within 5 s") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
