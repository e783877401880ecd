import BrokerClient
import BrokerProtocol
import DeterministicRandom
import XCTest

/// The reconnect rules, without sockets: backoff, liveness and what each ending calls for.
final class ConnectionStateMachineTests: XCTestCase {
    private let t0 = ContinuousClock.now
    private let policy = ConnectionStateMachine.Policy(
        initialDelay: .milliseconds(500), maximumDelay: .seconds(15), assumedHeartbeat: .seconds(10), openTimeout: .seconds(10))

    /// A machine with the jitter pinned at the top of its range (or wherever `value` says).
    private func machine(value: UInt64 = .max, policy: ConnectionStateMachine.Policy? = nil) -> ConnectionStateMachine {
        ConnectionStateMachine(policy: policy ?? self.policy, random: FixedRandom(value: value))
    }

    /// Connects and gets `welcome`, as a healthy first connection does.
    private func connected(_ machine: inout ConnectionStateMachine, heartbeat: Int = 30) {
        XCTAssertEqual(machine.start(), .connect(keepalive: .seconds(10), renewToken: false))
        machine.opened(now: t0)
        machine.welcomed(heartbeatSeconds: heartbeat)
    }

    private func delay(of action: ConnectionStateMachine.Action, file: StaticString = #filePath, line: UInt = #line) -> Duration? {
        guard case .wait(let delay, _, _) = action else {
            XCTFail("expected a wait, got \(action)", file: file, line: line)
            return nil
        }
        return delay
    }

    func testTheBackoffCeilingDoublesFromHalfASecondUpToTheCap() {
        let ceilings = (1...8).map { ConnectionStateMachine.ceiling(attempt: $0, initial: .milliseconds(500), maximum: .seconds(15)) }
        XCTAssertEqual(ceilings, [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(15), .seconds(15), .seconds(15)])
        XCTAssertEqual(ConnectionStateMachine.ceiling(attempt: 10_000, initial: .milliseconds(500), maximum: .seconds(15)), .seconds(15))
    }

    func testFullJitterSpreadsDelaysFromZeroToTheCeiling() {
        var machine = ConnectionStateMachine(policy: policy, random: SeededRandom(seed: 42))
        let delays = (0..<2_000).map { _ in machine.delay(attempt: 4) }
        XCTAssertTrue(delays.allSatisfy { $0 >= .zero && $0 <= .seconds(4) }, "every delay within [0, 4 s]")
        XCTAssertLessThan(delays.min() ?? .seconds(9), .milliseconds(100), "some retries go almost at once")
        XCTAssertGreaterThan(delays.max() ?? .zero, .milliseconds(3_900), "some wait nearly the whole ceiling")
        let below = delays.filter { $0 < .seconds(2) }.count
        XCTAssertTrue((800...1_200).contains(below), "uniform: about half below the middle, got \(below) of 2000")
    }

    func testTheJitterIsDrawnFromTheInjectedSource() {
        var low = machine(value: 0)
        XCTAssertEqual(low.delay(attempt: 3), .zero)
        var high = machine(value: .max)
        let top = high.delay(attempt: 3)
        XCTAssertGreaterThan(top, .milliseconds(1_999))
        XCTAssertLessThanOrEqual(top, .seconds(2))
    }

    func testFailuresGrowTheDelayAndAWelcomeResetsIt() {
        var machine = machine()
        connected(&machine)
        var ceilings: [Duration] = []
        for attempt in 1...4 {
            let action = machine.ended(.closed(code: nil, reason: nil), now: t0)
            guard case .wait(let delay, let counted, _) = action else { return XCTFail("expected a wait, got \(action)") }
            XCTAssertEqual(counted, attempt)
            ceilings.append(delay)
            XCTAssertEqual(machine.delayElapsed(), .connect(keepalive: .seconds(30), renewToken: false), "a retry keeps the token: it is renewed when missing, near expiry or refused")
        }
        XCTAssertTrue(zip(ceilings, [0.5, 1, 2, 4]).allSatisfy { abs(($0.0 / .seconds(1)) - $0.1) < 0.001 }, "\(ceilings)")
        machine.opened(now: t0)
        machine.welcomed(heartbeatSeconds: 30)
        XCTAssertEqual(machine.failures, 0)
        guard case .wait(_, 1, _) = machine.ended(.closed(code: 1001, reason: "server shutting down"), now: t0) else {
            return XCTFail("after a success the count starts again at 1")
        }
    }

    func testTheKeepaliveFollowsTheHeartbeatWelcomeAnnounced() {
        var machine = machine()
        XCTAssertEqual(machine.keepalive, .seconds(10), "before any welcome: the policy's assumption")
        connected(&machine, heartbeat: 2)
        XCTAssertEqual(machine.keepalive, .seconds(2))
        XCTAssertEqual(machine.deadAfter, .seconds(4), "dead after two heartbeats of silence")
        _ = machine.ended(.dead("keepalive unanswered"), now: t0)
        XCTAssertEqual(machine.delayElapsed(), .connect(keepalive: .seconds(2), renewToken: false), "the next connection pings at the heartbeat")
    }

    func testAnOpenConnectionWithoutWelcomeIsDeadAfterTheOpenTimeout() {
        var machine = machine()
        _ = machine.start()
        machine.opened(now: t0)
        XCTAssertEqual(machine.openDeadline, t0 + .seconds(10))
        XCTAssertEqual(machine.tick(now: t0 + .seconds(9)), .none)
        guard case .closeDead = machine.tick(now: t0 + .seconds(10)) else { return XCTFail("a silent upgrade must be given up") }
        XCTAssertNotNil(delay(of: machine.ended(.dead("no welcome"), now: t0 + .seconds(10))))
        machine = self.machine()
        connected(&machine)
        XCTAssertNil(machine.openDeadline, "once welcomed, the keepalive watches the connection")
        XCTAssertEqual(machine.tick(now: t0 + .seconds(3_600)), .none)
    }

    func testCloseCodesAndRefusalsMapToRetryRenewOrStop() {
        typealias E = ConnectionStateMachine.Ending
        let table: [(E, ConnectionStateMachine.Verdict)] = [
            (.closed(code: 4001, reason: "token expired"), .renewTokenThenRetry),
            (.refused(status: 401, message: "the token has expired"), .renewTokenThenRetry),
            (.closed(code: 1000, reason: nil), .retry),
            (.closed(code: 1001, reason: "server shutting down"), .retry),
            (.closed(code: 1001, reason: "Ping timeout"), .retry),
            (.closed(code: 1006, reason: nil), .retry),
            (.closed(code: nil, reason: "connection reset by peer"), .retry),
            (.closed(code: 1011, reason: nil), .retry),
            (.closed(code: 1012, reason: nil), .retry),
            (.closed(code: 1013, reason: nil), .retry),
            (.closed(code: 4008, reason: "slow consumer"), .retry),
            (.closed(code: 4009, reason: "too many pings"), .retry),
            (.closed(code: 4029, reason: nil), .retry),
            (.closed(code: 4444, reason: "a code this client does not know"), .retry),
            (.closed(code: 1002, reason: "protocol error"), .stop),
            (.closed(code: 1003, reason: nil), .stop),
            (.closed(code: 1007, reason: nil), .stop),
            (.closed(code: 1009, reason: nil), .stop),
            (.refused(status: 404, message: "no endpoint"), .stop),
            (.refused(status: 400, message: "not an upgrade"), .stop),
            (.refused(status: 429, message: "limit-reached"), .retry),
            (.refused(status: 503, message: "shutting down"), .retry),
            (.unreachable("connection refused"), .retry),
            (.dead("keepalive unanswered"), .retry),
        ]
        for (ending, expected) in table {
            XCTAssertEqual(ConnectionStateMachine.verdict(for: ending), expected, "\(ending)")
        }
    }

    func testAnExpiredTokenIsRenewedAtOnceAndARefusedFreshTokenStops() {
        var machine = machine()
        connected(&machine)
        XCTAssertEqual(machine.ended(.closed(code: 4001, reason: nil), now: t0), .connect(keepalive: .seconds(30), renewToken: true))
        machine.opened(now: t0)
        machine.welcomed(heartbeatSeconds: 30)
        // Expired again an hour later: renewed again, the earlier renewal got through.
        XCTAssertEqual(machine.ended(.closed(code: 4001, reason: nil), now: t0), .connect(keepalive: .seconds(30), renewToken: true))
        // The provider's fresh token is refused: no loop of renewals.
        guard case .stop(_, .refused(401, _)) = machine.ended(.refused(status: 401, message: "bad signature"), now: t0) else {
            return XCTFail("a refused fresh token must stop")
        }
        XCTAssertEqual(machine.phase, .stopped)
        XCTAssertEqual(machine.delayElapsed(), .none, "nothing more once stopped")
    }

    func testRepeatedExpiryWithoutWelcomeFallsBackToTheBackoff() {
        var machine = machine()
        connected(&machine)
        _ = machine.ended(.closed(code: 4001, reason: nil), now: t0)
        machine.opened(now: t0)
        // Closed with 4001 again before welcome (a provider handing out an old token): wait instead of hammering.
        XCTAssertNotNil(delay(of: machine.ended(.closed(code: 4001, reason: nil), now: t0)))
    }

    func testTooManyConnectionsOrRefusedFramesWaitAtLeastFiveSeconds() {
        for ending in [ConnectionStateMachine.Ending.closed(code: 4029, reason: nil), .closed(code: 4009, reason: nil), .refused(status: 429, message: "")] {
            var machine = machine(value: 0)
            connected(&machine)
            XCTAssertEqual(delay(of: machine.ended(ending, now: t0)), .seconds(5), "\(ending)")
        }
    }

    func testAToolCanGiveUpBeforeTheFirstConnection() {
        var policy = self.policy
        policy.attemptsBeforeFirstConnection = 1
        var machine = machine(policy: policy)
        _ = machine.start()
        guard case .stop(_, .unreachable) = machine.ended(.unreachable("connection refused"), now: t0) else {
            return XCTFail("a wrong address is reported at once")
        }
        // After one success, the same failure is retried forever.
        machine = self.machine(policy: policy)
        connected(&machine)
        for _ in 0..<20 {
            XCTAssertNotNil(delay(of: machine.ended(.unreachable("connection refused"), now: t0)))
            _ = machine.delayElapsed()
        }
    }

    func testTheNetworkComingBackStartsAnAttemptAtOnceButNotTwoWithinTheGap() {
        var machine = machine()
        connected(&machine)
        machine.attempting(now: t0)
        for _ in 0..<5 { _ = machine.ended(.unreachable("offline"), now: t0 + .seconds(1)); _ = machine.delayElapsed() }
        _ = machine.ended(.unreachable("offline"), now: t0 + .seconds(1))
        XCTAssertEqual(machine.failures, 6)
        // 1 s after the last attempt: the rest of the 2 s gap, then an attempt; the backoff starts over.
        XCTAssertEqual(machine.connectivityReturned(now: t0 + .seconds(1)), .wait(delay: .seconds(1), attempt: 1, reason: "the network came back"))
        XCTAssertEqual(machine.failures, 0)
        XCTAssertEqual(machine.delayElapsed(), .connect(keepalive: .seconds(30), renewToken: false))
        machine.attempting(now: t0 + .seconds(2))
        _ = machine.ended(.unreachable("offline"), now: t0 + .seconds(5))
        XCTAssertEqual(machine.connectivityReturned(now: t0 + .seconds(5)), .connect(keepalive: .seconds(30), renewToken: false), "the gap has passed: at once")
        XCTAssertEqual(machine.connectivityReturned(now: t0 + .seconds(5)), .none, "already connecting")
    }

    func testEndingsAreDescribedInWords() {
        XCTAssertEqual(ConnectionStateMachine.describe(.closed(code: 4001, reason: "token expired")), "the token expired (4001)")
        XCTAssertEqual(ConnectionStateMachine.describe(.closed(code: 1001, reason: "Ping timeout")), "Ping timeout (1001)")
        XCTAssertEqual(ConnectionStateMachine.describe(.closed(code: nil, reason: nil)), "the connection dropped")
    }
}

/// A generator that always answers `value`: pins the jitter to one end of its range.
struct FixedRandom: RandomNumberGenerator, Sendable {
    let value: UInt64
    mutating func next() -> UInt64 { value }
}
