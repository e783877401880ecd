import BrokerProtocol
import DeterministicRandom
import FleetSimulation
import XCTest

/// The lifecycle scheduler: every plan is one Ponte's state machine (and so the broker) accepts.
final class DonationLifecycleTests: XCTestCase {
    private func updates(_ lifecycle: DonationLifecycle) -> [String] {
        lifecycle.steps.compactMap { step in
            if case .update(let state, let assigned) = step { return state.rawValue + (assigned ? "" : "/none") }
            return nil
        }
    }

    func testEveryFateFollowsTheStateMachine() {
        for seed in 0..<200 as Range<UInt64> {
            for fate in DonationFate.allCases {
                var rng = SeededRandom(seed: seed)
                let lifecycle = DonationLifecycle.plan(fate: fate, using: &rng)
                XCTAssertNil(lifecycle.refusal(), "\(fate) with seed \(seed): \(updates(lifecycle))")
            }
        }
    }

    func testADeliveredDonationGoesThroughTheWholeTrip() {
        var rng = SeededRandom(seed: 1)
        let lifecycle = DonationLifecycle.plan(fate: .delivered, using: &rng)
        let states = updates(lifecycle)
        XCTAssertEqual(states.first, "CREATED/none", "looking for a volunteer first")
        XCTAssertEqual(Array(states.dropFirst().prefix(2)), ["CREATED", "BEING-LOOKED-FOR"])
        XCTAssertTrue(["PICKED-BY-VOLUNTEER", "DELIVERED-BY-DONOR"].contains(states[3]))
        XCTAssertEqual(Array(states.suffix(2)), ["BEING-TAKEN-TO", "DELIVERED"])
        XCTAssertEqual(lifecycle.expectedArrivals, [.home, .institution])
        // The drives happen while the donation is trackable, towards the state's destination.
        var state: DonationState?
        for step in lifecycle.steps {
            switch step {
            case .update(let next, _): state = next
            case .drive(let destination, _): XCTAssertEqual(state?.destination, destination)
            case .wait: break
            }
        }
    }

    func testCancellationsAndDropsEndAsInRealLife() {
        var rng = SeededRandom(seed: 5)
        XCTAssertEqual(updates(.plan(fate: .cancelledBeforeStart, using: &rng)), ["CREATED/none", "CREATED", "CANCELLED"])
        let onTheWay = DonationLifecycle.plan(fate: .cancelledOnTheWay, using: &rng)
        XCTAssertEqual(updates(onTheWay), ["CREATED/none", "CREATED", "BEING-LOOKED-FOR", "CANCELLED"])
        XCTAssertEqual(onTheWay.expectedArrivals, [], "the volunteer stops part way")
        XCTAssertEqual(
            updates(.plan(fate: .volunteerDrops, using: &rng)), ["CREATED/none", "CREATED", "BEING-LOOKED-FOR", "CREATED/none", "CANCELLED/none"])
        let atTheDoor = updates(.plan(fate: .cancelledAtHandover, using: &rng))
        XCTAssertEqual(atTheDoor.last, "CANCELLED")
        XCTAssertFalse(atTheDoor.contains("BEING-TAKEN-TO"), "a donation on its way to the institution can no longer be cancelled")
    }

    func testTheSchedulerWalksThePlanAndTracksTheStage() {
        var rng = SeededRandom(seed: 9)
        var lifecycle = DonationLifecycle.plan(fate: .delivered, timing: .fixed(10), using: &rng)
        XCTAssertNil(lifecycle.stage)
        var waited = 0.0
        var taken = 0
        while let step = lifecycle.next() {
            taken += 1
            if case .wait(let seconds) = step { waited += seconds }
        }
        XCTAssertEqual(taken, lifecycle.steps.count)
        XCTAssertTrue(lifecycle.isFinished)
        XCTAssertEqual(lifecycle.stage?.state, .delivered)
        XCTAssertEqual(waited, 50, "five waits of ten seconds")
        XCTAssertNil(lifecycle.next())
    }

    func testFatesAreMostlyDeliveries() {
        var rng = SeededRandom(seed: 77)
        var counts: [DonationFate: Int] = [:]
        for _ in 0..<10_000 { counts[DonationFate.draw(using: &rng), default: 0] += 1 }
        XCTAssertEqual(Double(counts[.delivered] ?? 0) / 10_000, 0.75, accuracy: 0.03)
        for fate in DonationFate.allCases { XCTAssertGreaterThan(counts[fate] ?? 0, 200, "\(fate) happens too") }
    }
}
