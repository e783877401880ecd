import BrokerProtocol
import XCTest

@testable import BrokerClient

/// What `publish` gives back: one outcome per fix, to await, that never holds a task past its cancellation.
final class FixReceiptTests: XCTestCase {
    private let fix = Position(lat: -34.6, lon: -58.4, timestamp: 1_700_000_000_000)

    func testEveryWaiterGetsTheOneOutcomeAndALaterSettlementChangesNothing() async throws {
        let settlement = FixSettlement()
        let receipt = VolunteerPublisher.FixReceipt(position: fix, slot: settlement)
        XCTAssertNil(receipt.settled)
        let first = Task { await receipt.outcome }
        let second = Task { await receipt.outcome }
        let accepted = VolunteerPublisher.FixOutcome(
            position: fix, result: .accepted(seq: 4, audience: .init(tracking: true, watchers: 1)))
        try await Task.sleep(for: .milliseconds(50))
        settlement.settle(accepted)
        settlement.settle(.init(position: fix, result: .superseded))
        let firstOutcome = await first.value
        let secondOutcome = await second.value
        let lateOutcome = await receipt.outcome
        XCTAssertEqual(firstOutcome, accepted)
        XCTAssertEqual(secondOutcome, accepted)
        XCTAssertEqual(lateOutcome, accepted, "a wait that starts after the answer gets it at once")
        XCTAssertEqual(receipt.settled, accepted)
    }

    func testACancelledWaitEndsAtOnceWithNothingAndOthersStillGetTheOutcome() async throws {
        let settlement = FixSettlement()
        let receipt = VolunteerPublisher.FixReceipt(position: fix, slot: settlement)
        let cancelled = Task { await receipt.outcome }
        let patient = Task { await receipt.outcome }
        try await Task.sleep(for: .milliseconds(50))
        cancelled.cancel()
        let nothing = await cancelled.value
        XCTAssertNil(nothing, "the app's task is not held: the view went away")
        let refused = VolunteerPublisher.FixOutcome(position: fix, result: .refused(.invalidPosition, message: "position.lat is out of range"))
        settlement.settle(refused)
        let outcome = await patient.value
        XCTAssertEqual(outcome, refused)
    }
}
