import Atomics
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import XCTest

@testable import LoadDriver

/// The bench publishers' schedule: a fixed rate, so that slow sends do not make a publisher drift and
/// publishers do not bunch up over a run.
final class FixedRateTickerTests: XCTestCase {
    private var group: MultiThreadedEventLoopGroup!

    override func setUp() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    override func tearDown() {
        try? group.syncShutdownGracefully()
        group = nil
    }

    /// Runs a ticker until it has run `runs` times (or 10 s pass) and returns when each run started.
    private func runTimes(
        runs: Int, period: TimeAmount, body: @escaping @Sendable (Int) -> Void = { _ in }
    ) throws -> [NIODeadline] {
        let loop = group.next()
        let times = NIOLockedValueBox<[NIODeadline]>([])
        let done = loop.makePromise(of: Void.self)
        let ticker = FixedRateTicker.start(on: loop, first: .now() + .milliseconds(5), period: period) { ticker in
            let count = times.withLockedValue { times -> Int in
                times.append(.now())
                return times.count
            }
            body(count)
            if count == runs {
                ticker.cancel()
                done.succeed()
            }
        }
        let timeout = loop.scheduleTask(in: .seconds(10)) { done.fail(ChannelError.ioOnClosedChannel) }
        defer {
            timeout.cancel()
            ticker.cancel()
        }
        try done.futureResult.wait()
        return times.withLockedValue { $0 }
    }

    func testSlowRunsDoNotPushTheLaterOnes() throws {
        // Each run takes 20 ms of a 40 ms period, as a publisher on a busy loop can: with a fixed delay between
        // runs the tenth would start after 9 × 60 ms = 540 ms; at a fixed rate it starts after 9 × 40 = 360 ms.
        let times = try runTimes(runs: 10, period: .milliseconds(40)) { _ in usleep(20_000) }
        let span = times[9] - times[0]
        XCTAssertLessThan(span, .milliseconds(450), "the runs drifted: \(span.nanoseconds / 1_000_000) ms for nine periods of 40 ms")
        XCTAssertGreaterThanOrEqual(span, .milliseconds(355), "the runs came faster than the rate")
    }

    func testAStallRestartsTheScheduleInsteadOfSendingWhatWasMissedInABurst() throws {
        // The third run blocks the loop for 5 periods. Catching up would send the missed runs back to back after
        // it; the schedule restarts from the end of the stall instead: one run then, the next a period later.
        let stallEnded = NIOLockedValueBox<NIODeadline?>(nil)
        let times = try runTimes(runs: 6, period: .milliseconds(20)) { count in
            guard count == 3 else { return }
            usleep(100_000)
            stallEnded.withLockedValue { $0 = .now() }
        }
        let end = try XCTUnwrap(stallEnded.withLockedValue { $0 })
        let second = times[4] - end
        XCTAssertGreaterThanOrEqual(second, .milliseconds(18), "the second run after the stall came in a burst: \(second.nanoseconds / 1_000) µs after it")
    }

    func testACancelledTickerRunsNoMore() throws {
        let loop = group.next()
        let runs = ManagedAtomic<Int>(0)
        let ticker = FixedRateTicker.start(on: loop, first: .now(), period: .milliseconds(5)) { _ in
            runs.wrappingIncrement(by: 1, ordering: .relaxed)
        }
        try loop.scheduleTask(in: .milliseconds(30)) {}.futureResult.wait()
        ticker.cancel()
        // The cancel is taken on the loop: once a task queued after it has run, no run may start.
        try loop.submit {}.wait()
        let stopped = runs.load(ordering: .relaxed)
        XCTAssertGreaterThan(stopped, 0)
        try loop.scheduleTask(in: .milliseconds(30)) {}.futureResult.wait()
        XCTAssertEqual(runs.load(ordering: .relaxed), stopped)
    }
}
