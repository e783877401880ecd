import DeterministicRandom
import XCTest

@testable import EventDelivery

/// Exponential backoff with full jitter, drawn from a seeded generator so every run checks the same delays.
final class RetryScheduleTests: XCTestCase {
    let schedule = RetrySchedule(baseMilliseconds: 1_000, capMilliseconds: 60_000, giveUpAfterMilliseconds: 3_600_000)

    func testTheBoundDoublesFromTheBaseUpToTheCap() {
        XCTAssertEqual((1...9).map { schedule.bound(afterAttempt: $0) }, [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000])
        XCTAssertEqual(schedule.bound(afterAttempt: 0), 1_000, "a first attempt not yet counted waits as the first retry")
        XCTAssertEqual(schedule.bound(afterAttempt: 64), 60_000, "no overflow after many attempts")
        XCTAssertEqual(schedule.bound(afterAttempt: .max), 60_000)
    }

    func testDelaysAreSpreadOverTheWholeRangeAndNeverOutsideIt() {
        var random = SeededRandom(seed: 42)
        for attempt in 1...12 {
            let bound = schedule.bound(afterAttempt: attempt)
            let delays = (0..<2_000).map { _ in schedule.delay(afterAttempt: attempt, random: &random) }
            XCTAssertTrue(delays.allSatisfy { (0...bound).contains($0) }, "attempt \(attempt)")
            // Full jitter: the delays cover the range, not a band near its top.
            XCTAssertLessThan(delays.min()!, bound / 10, "attempt \(attempt)")
            XCTAssertGreaterThan(delays.max()!, bound - bound / 10, "attempt \(attempt)")
            let mean = Double(delays.reduce(0, +)) / Double(delays.count)
            XCTAssertEqual(mean, Double(bound) / 2, accuracy: Double(bound) * 0.05, "attempt \(attempt)")
        }
    }

    func testTheSameSeedGivesTheSameDelays() {
        var first = SeededRandom(seed: 7)
        var second = SeededRandom(seed: 7)
        let a = (1...20).map { schedule.delay(afterAttempt: $0, random: &first) }
        let b = (1...20).map { schedule.delay(afterAttempt: $0, random: &second) }
        XCTAssertEqual(a, b)
    }

    func testTheDeliveryIsGivenUpAfterTheTotalDuration() {
        XCTAssertFalse(schedule.givesUp(firstAttemptAt: 10_000, now: 10_000))
        XCTAssertFalse(schedule.givesUp(firstAttemptAt: 10_000, now: 3_609_999))
        XCTAssertTrue(schedule.givesUp(firstAttemptAt: 10_000, now: 3_610_000))
    }

    func testTheLastRetryIsMovedToTheGiveUpTimeRatherThanSkipped() {
        var random = SeededRandom(seed: 3)
        let late = 3_600_000 - 10
        for _ in 0..<100 {
            let next = schedule.nextAttempt(afterAttempt: 20, firstAttemptAt: 0, now: Int64(late), random: &random)
            XCTAssertNotNil(next)
            XCTAssertLessThanOrEqual(next!, 3_600_000)
            XCTAssertGreaterThanOrEqual(next!, Int64(late))
        }
        XCTAssertNil(schedule.nextAttempt(afterAttempt: 21, firstAttemptAt: 0, now: 3_600_000, random: &random))
    }
}
