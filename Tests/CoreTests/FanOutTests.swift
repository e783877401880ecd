import BrokerProtocol
import NIOConcurrencyHelpers
import XCTest

@testable import BrokerCore

/// Publish -> fan-out through the sinks: each position is encoded and framed once, reported once, conflated
/// in a slow donor's queue, and a donor that stops reading is cut off with 4008 without slowing anyone.
final class FanOutTests: XCTestCase {
    /// Counts the frames the transport's framing is asked for.
    private final class FramingCounter: Sendable {
        let count = NIOLockedValueBox(0)
        var framing: Framing {
            Framing { payload in
                self.count.withLockedValue { $0 += 1 }
                return Framing.plain.prepare(Array(payload))
            }
        }
    }

    func testAPositionIsFramedOnceAndReportedOnceForAllItsSubscribers() throws {
        let counter = FramingCounter()
        let fixture = HubFixture(framing: counter.framing)
        var sinks: [FakeSink] = []
        for index in 0..<3 {
            fixture.move("d-\(index)", to: .beingLookedFor, donor: "donor-\(index)@example.org")
            sinks.append(try fixture.watcher(of: "d-\(index)", "donor-\(index)@example.org").1)
        }
        fixture.publish()  // the volunteer comes online: presence, then the position
        for sink in sinks { _ = sink.take() }
        let framedBefore = counter.count.withLockedValue { $0 }
        let keptBefore = fixture.metrics.counts.keptCalls

        fixture.clock.advance(by: 1_000)
        XCTAssertEqual(try fixture.publish().get().watchers, 3)
        XCTAssertEqual(counter.count.withLockedValue { $0 } - framedBefore, 1, "one framing for three deliveries")
        XCTAssertEqual(fixture.metrics.counts.keptCalls - keptBefore, 1, "one metrics call for the whole fan-out")
        let delivered = sinks.map { $0.take().entries.map(\.frame.bytes) }
        XCTAssertEqual(delivered.map(\.count), [1, 1, 1])
        XCTAssertEqual(Set(delivered.flatMap { $0 }).count, 1, "the same bytes for every subscriber")
    }

    func testASlowDonorsQueueKeepsTheNewestPositionInPlaceOfAnOlderOne() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        fixture.publish()
        // Room for three positions and a half.
        let (_, slow) = try fixture.watcher(limit: fixture.positionFrameSize * 7 / 2)
        var seqs: [Int64] = []
        for _ in 0..<4 {
            fixture.clock.advance(by: 1_000)
            seqs.append(try XCTUnwrap(try fixture.publish().get().seq))
        }
        XCTAssertEqual(fixture.metrics.counts.conflated, 1)
        let received = try slow.frames().compactMap { frame -> Int64? in
            if case .position(let update) = frame { return update.seq }
            return nil
        }
        XCTAssertEqual(received, [seqs[0], seqs[1], seqs[3]], "the third replaced by the fourth, nothing closed")
    }

    func testADonorThatStopsReadingIsClosedWith4008AndTheOthersStillGetEveryPosition() throws {
        let fixture = HubFixture()
        fixture.move("d-1", to: .beingLookedFor)
        fixture.move("d-2", to: .beingLookedFor, donor: "reader@example.org")
        let (_, frozen) = try fixture.watcher(of: "d-1")
        let (_, reader) = try fixture.watcher(of: "d-2", "reader@example.org")
        fixture.publish()
        fixture.clock.advance(by: 1_000)
        fixture.publish()
        _ = reader.take()
        // The frozen donor takes nothing for longer than the stall limit while frames wait.
        fixture.instant.advance(by: .seconds(11))
        fixture.clock.advance(by: 1_000)
        let outcome = try fixture.publish().get()
        XCTAssertEqual(outcome.watchers, 1, "only the reader")
        XCTAssertEqual(try frozen.frames().map(\.type), ["error"])
        XCTAssertEqual(try frozen.frames(), [])
        XCTAssertEqual(fixture.metrics.counts.slowConsumers, 1)
        XCTAssertEqual(try reader.frames().map(\.type), ["position"])
    }

    func testTheOutboxByteLimitClosesADonorWhoseQueueCannotHoldAReply() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        let (connection, sink) = fixture.connect(limit: 64)
        // The `subscribed` reply alone is larger than the whole queue: 4008, nothing half-sent.
        XCTAssertNil(fixture.hub.subscribe(connection, .init(target: .donation("d-1"))))
        let frames = try sink.frames()
        XCTAssertEqual(frames.count, 1)
        guard case .error(let close) = frames.first else { return XCTFail("expected the close, got \(frames)") }
        XCTAssertEqual(close.message, "close 4008 slow consumer: outbound queue full")
    }

    func testACloseIsNotOvertakenByALaterPosition() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        let (_, sink) = try fixture.watcher()
        fixture.publish()
        fixture.hub.closeAll(code: CloseCode.goingAway, reason: "shutting down")
        fixture.clock.advance(by: 1_000)
        XCTAssertEqual(try fixture.publish().get().watchers, 0, "the closing donor is not counted")
        XCTAssertEqual(try sink.frames().map(\.type), ["presence", "position", "error"], "the close comes last")
    }

    // A channel keeps the list of connections its positions reach from one publish to the next: these
    // two hold it to the subscriptions as they are at each publish, not as they were at the last.

    func testADonorWhoUnsubscribesAfterAPublishGetsNoLaterPosition() throws {
        let fixture = HubFixture()
        fixture.move("d-1", to: .beingLookedFor)
        fixture.move("d-2", to: .beingLookedFor, donor: "reader@example.org")
        let (leaver, left) = try fixture.watcher(of: "d-1")
        let (_, reader) = try fixture.watcher(of: "d-2", "reader@example.org")
        fixture.publish()
        fixture.clock.advance(by: 1_000)
        XCTAssertEqual(try fixture.publish().get().watchers, 2)
        _ = left.take()
        _ = reader.take()

        XCTAssertNil(fixture.hub.unsubscribe(leaver, .init(target: .donation("d-1"))))
        fixture.clock.advance(by: 1_000)
        XCTAssertEqual(try fixture.publish().get().watchers, 1, "only the reader")
        XCTAssertEqual(try left.frames().map(\.type), ["unsubscribed"], "no position after the unsubscription")
        XCTAssertEqual(try reader.frames().map(\.type), ["position"])
    }

    func testADonorWhoSubscribesAfterAPublishGetsTheNextOne() throws {
        let fixture = HubFixture()
        fixture.move("d-1", to: .beingLookedFor)
        fixture.move("d-2", to: .beingLookedFor, donor: "late@example.org")
        let (_, early) = try fixture.watcher(of: "d-1")
        fixture.publish()
        fixture.clock.advance(by: 1_000)
        XCTAssertEqual(try fixture.publish().get().watchers, 1)
        _ = early.take()

        let (_, late) = try fixture.watcher(of: "d-2", "late@example.org")
        fixture.clock.advance(by: 1_000)
        XCTAssertEqual(try fixture.publish().get().watchers, 2)
        XCTAssertEqual(try late.frames().map(\.type), ["position"])
        XCTAssertEqual(try early.frames().map(\.type), ["position"])
    }
}
