import XCTest

@testable import BrokerCore

/// A connection's subscription records, whose first entry is kept inline: whatever the order of subscribes and
/// unsubscribes, each channel answers with the donation that allowed it, and a forgotten one with nothing.
final class ConnectionSubscriptionsTests: XCTestCase {
    func testTheOneSubscriptionOfADonorIsFoundAndForgotten() {
        var records = ConnectionSubscriptions()
        XCTAssertEqual(records.count, 0)
        XCTAssertNil(records.donation(for: "volunteer@example.org"))
        records.set(channel: "volunteer@example.org", donation: "d-1")
        XCTAssertEqual(records.count, 1)
        XCTAssertEqual(records.donation(for: "volunteer@example.org"), "d-1")
        XCTAssertNil(records.donation(for: "other@example.org"), "another channel is not watched")
        XCTAssertEqual(records.channels, ["volunteer@example.org"])
        XCTAssertEqual(records.remove(channel: "volunteer@example.org"), "d-1")
        XCTAssertEqual(records.count, 0)
        XCTAssertNil(records.donation(for: "volunteer@example.org"), "forgotten")
        XCTAssertNil(records.remove(channel: "volunteer@example.org"), "forgotten once")
    }

    func testResubscribingReplacesTheDonationWithoutASecondEntry() {
        var records = ConnectionSubscriptions()
        records.set(channel: "a", donation: "d-1")
        records.set(channel: "b", donation: "d-2")
        records.set(channel: "a", donation: "d-3")
        records.set(channel: "b", donation: "d-4")
        XCTAssertEqual(records.count, 2)
        XCTAssertEqual(records.donation(for: "a"), "d-3")
        XCTAssertEqual(records.donation(for: "b"), "d-4")
    }

    func testForgettingTheInlineSubscriptionKeepsEveryOther() {
        var records = ConnectionSubscriptions()
        for index in 0..<5 { records.set(channel: "c\(index)", donation: "d\(index)") }
        XCTAssertEqual(records.remove(channel: "c0"), "d0")
        XCTAssertEqual(Set(records.channels), ["c1", "c2", "c3", "c4"])
        for index in 1..<5 { XCTAssertEqual(records.donation(for: "c\(index)"), "d\(index)") }
        // Whichever took the inline place, forgetting each in turn leaves the others intact.
        for removed in 1..<5 {
            XCTAssertEqual(records.remove(channel: "c\(removed)"), "d\(removed)")
            XCTAssertNil(records.donation(for: "c\(removed)"))
            XCTAssertEqual(records.count, 4 - removed)
            for kept in (removed + 1)..<5 { XCTAssertEqual(records.donation(for: "c\(kept)"), "d\(kept)") }
        }
        XCTAssertEqual(records.channels, [])
        records.set(channel: "again", donation: "d9")
        XCTAssertEqual(records.channels, ["again"])
    }
}
