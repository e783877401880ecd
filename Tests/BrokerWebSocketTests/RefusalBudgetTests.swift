import XCTest

@testable import BrokerTestSupport
@testable import BrokerWebSocket

/// The refusal budget's table: bounded, newcomers past it sharing one budget, and a key forgotten once refilled
/// (`GuessBudgetTests` spends the budget against a broker).
final class RefusalBudgetTests: XCTestCase {
    func testTheBudgetTableIsBoundedAndForgetsWhatRefilled() {
        let clock = ManualClock(start: 1_000_000)
        let budget = RefusalBudget(perMinute: 2, maximumKeys: 3, clock: clock.wallClock)
        for key in ["a", "b", "c"] {
            XCTAssertTrue(budget.charge(key))
            XCTAssertTrue(budget.charge(key))
            XCTAssertFalse(budget.charge(key), "\(key) is past its budget")
            XCTAssertTrue(budget.isExhausted(key))
        }
        // A fourth key finds the table full: it shares the overflow bucket with every other newcomer.
        XCTAssertTrue(budget.charge("d"))
        XCTAssertTrue(budget.charge("e"))
        XCTAssertFalse(budget.charge("f"), "newcomers past the table share one budget")
        XCTAssertEqual(budget.count, 3)
        // Half a minute refills one refusal each: nothing is forgotten yet; a minute refills all, and they go.
        clock.advance(by: 30_000)
        budget.sweep()
        XCTAssertEqual(budget.count, 3)
        XCTAssertTrue(budget.charge("a"))
        clock.advance(by: 60_000)
        budget.sweep()
        XCTAssertEqual(budget.count, 0)
        XCTAssertFalse(budget.isExhausted("a"))
    }
}
