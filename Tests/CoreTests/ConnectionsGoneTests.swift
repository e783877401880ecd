import XCTest

@testable import BrokerCore

/// A draining shutdown waits for the last connection to go: woken by it, not by looking every few milliseconds.
final class ConnectionsGoneTests: XCTestCase {
    func testTheWaitEndsWhenTheLastConnectionGoesAndNotBefore() async throws {
        let fixture = HubFixture()
        let (first, _) = fixture.connect(fixture.donor)
        let (second, _) = fixture.connect(fixture.volunteer)
        let hub = fixture.hub
        let gone = Task { await hub.connectionsGone() }

        fixture.hub.disconnect(first)
        try await Task.sleep(for: .milliseconds(100))
        XCTAssertEqual(fixture.hub.connectionCount, 1)
        fixture.hub.disconnect(second)

        try await waitFor(gone, within: .seconds(5))
        XCTAssertEqual(fixture.hub.connectionCount, 0)
    }

    func testTheWaitEndsAtOnceWithNoConnectionAndWhenCancelled() async throws {
        let fixture = HubFixture()
        let hub = fixture.hub
        try await waitFor(Task { await hub.connectionsGone() }, within: .seconds(5))

        _ = fixture.connect(fixture.donor)
        let waiting = Task { await hub.connectionsGone() }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        try await waitFor(waiting, within: .seconds(5))
        XCTAssertEqual(fixture.hub.connectionCount, 1, "cancelled, not emptied")
    }

    private func waitFor(_ task: Task<Void, Never>, within limit: Duration) async throws {
        let finished = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await task.value
                return true
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        XCTAssertTrue(finished, "still waiting after \(limit)")
    }
}
