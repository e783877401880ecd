import XCTest

@testable import BrokerCore

/// A draining shutdown waits for the last connection to go: woken by it, not by looking every few milliseconds.
final class ConnectionsGoneTests: XCTestCase {
    func testTheWaitEndsWhenTheLastConnectionGoesAndNotBefore() async throws {
        let fixture = HubFixture()
        let (first, _) = fixture.connect(fixture.donor)
        let (second, _) = fixture.connect(fixture.volunteer)
        let hub = fixture.hub
        let gone = Task { await hub.connectionsGone(before: .now + .seconds(5)) }

        fixture.hub.disconnect(first)
        let stillOneOpen = await hub.connectionsGone(before: .now + .milliseconds(100))
        XCTAssertFalse(stillOneOpen, "one connection is still open")
        XCTAssertEqual(fixture.hub.connectionCount, 1)
        fixture.hub.disconnect(second)

        let started = ContinuousClock.now
        let emptied = await gone.value
        XCTAssertTrue(emptied, "still waiting after 5 s")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2), "woken by the last connection, not by the deadline")
        XCTAssertEqual(fixture.hub.connectionCount, 0)
    }

    func testTheWaitEndsAtOnceWithNoConnectionAndWhenCancelled() async throws {
        let fixture = HubFixture()
        let hub = fixture.hub
        let emptyAlready = await hub.connectionsGone(before: .now + .seconds(5))
        XCTAssertTrue(emptyAlready)

        _ = fixture.connect(fixture.donor)
        let waiting = Task { await hub.connectionsGone(before: .now + .seconds(30)) }
        try await Task.sleep(for: .milliseconds(50))
        let cancelledAt = ContinuousClock.now
        waiting.cancel()
        let emptied = await waiting.value
        XCTAssertLessThan(ContinuousClock.now - cancelledAt, .seconds(5), "still waiting after 5 s")
        XCTAssertFalse(emptied)
        XCTAssertEqual(fixture.hub.connectionCount, 1, "cancelled, not emptied")
    }
}
