import XCTest

@testable import BrokerClient

/// Events for any number of consumers: each gets every event from when it starts; one that stops leaves the others.
final class EventBroadcastTests: XCTestCase {
    func testTheFirstConsumerGetsWhatCameBeforeItAndACancelledOneLeavesTheOthers() async throws {
        let broadcast = EventBroadcast<Int>(limit: 16)
        broadcast.yield(1)
        var first = broadcast.subscribe().makeAsyncIterator()
        let second = broadcast.subscribe()
        let cancelled = Task {
            var count = 0
            for await _ in broadcast.subscribe() { count += 1 }
            return count
        }
        cancelled.cancel()
        _ = await cancelled.value
        broadcast.yield(2)
        broadcast.yield(3)
        broadcast.finish()
        var got: [Int] = []
        while let next = await first.next() { got.append(next) }
        XCTAssertEqual(got, [1, 2, 3], "the first consumer also gets what came before it")
        var other: [Int] = []
        for await value in second { other.append(value) }
        XCTAssertEqual(other, [2, 3])
        var late: [Int] = []
        for await value in broadcast.subscribe() { late.append(value) }
        XCTAssertEqual(late, [], "after the end, a new consumer's stream is empty")
    }

    func testEachConsumersBufferIsBounded() async {
        let broadcast = EventBroadcast<Int>(limit: 3)
        let stream = broadcast.subscribe()
        for value in 1...10 { broadcast.yield(value) }
        broadcast.finish()
        var got: [Int] = []
        for await value in stream { got.append(value) }
        XCTAssertEqual(got, [8, 9, 10], "the oldest unread are dropped beyond the limit")
    }
}

/// The run loop's nap between attempts: the app's word ends it at once, otherwise its deadline does.
final class LinkControlTests: XCTestCase {
    func testANapEndsAtItsDeadlineOrAtOnceWhenTheAppSpeaks() async {
        let control = LinkControl()
        var start = ContinuousClock.now
        await control.nap(until: .now + .milliseconds(100))
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(100))

        start = ContinuousClock.now
        let napping = Task { await control.nap(until: .now + .seconds(30)) }
        try? await Task.sleep(for: .milliseconds(50))
        control.networkAvailable()
        await napping.value
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(5), "woken by the network's return")
        XCTAssertEqual(control.takeNudge(), .connectivity)
        XCTAssertNil(control.takeNudge(), "taken once")

        start = ContinuousClock.now
        let cancelled = Task { await control.nap(until: .now + .seconds(30)) }
        cancelled.cancel()
        await cancelled.value
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(5), "cancellation ends a nap")
        XCTAssertTrue(control.claimRun())
        XCTAssertFalse(control.claimRun(), "one run")
    }
}
