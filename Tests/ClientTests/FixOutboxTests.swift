import BrokerProtocol
import XCTest

@testable import BrokerClient

/// The publisher's pending fixes, without sockets: each fix handed over gets exactly one outcome, an older fix is
/// never sent after a newer one, and the newest unacknowledged fix is sent again after a reconnect.
final class FixOutboxTests: XCTestCase {
    private typealias Outbox = FixOutbox<String>

    private func fix(_ second: Int64) -> Position {
        Position(lat: -34.6, lon: -58.4, timestamp: 1_700_000_000_000 + second * 1000)
    }

    private let audience = VolunteerPublisher.Audience(tracking: true, watchers: 1)

    func testAFixStaysPendingUntilItsAckAndIsSentAgainAfterAReconnect() {
        var outbox = Outbox()
        XCTAssertNil(outbox.connected("c1", oldestTimestamp: 0).send)
        guard let (connection, id) = outbox.hand(fix(1)).send else { return XCTFail("not sent while connected") }
        XCTAssertEqual(connection, "c1")
        XCTAssertNotNil(outbox.oldestUnacknowledged, "pending until its ack")
        // The path died before the ack: nothing is lost, and the fix goes out again on the next connection.
        XCTAssertEqual(outbox.disconnected().map(\.outcome), [])
        guard let (again, newID) = outbox.connected("c2", oldestTimestamp: 0).send else { return XCTFail("not sent again") }
        XCTAssertEqual(again, fix(1))
        XCTAssertNotEqual(newID, id)
        XCTAssertNil(outbox.acknowledged(id, result: .accepted(seq: 1, audience: audience)), "an ack for the dead connection's id matches nothing")
        XCTAssertEqual(
            outbox.acknowledged(newID, result: .accepted(seq: 7, audience: audience))?.outcome, .init(position: fix(1), result: .accepted(seq: 7, audience: audience)))
        XCTAssertNil(outbox.oldestUnacknowledged)
    }

    func testOnlyTheNewestUnacknowledgedFixIsSentAgainAndTheOlderAreSuperseded() {
        var outbox = Outbox()
        _ = outbox.connected("c1", oldestTimestamp: 0)
        _ = outbox.hand(fix(1))
        _ = outbox.hand(fix(2))
        XCTAssertEqual(outbox.disconnected().map(\.outcome), [.init(position: fix(1), result: .superseded)])
        // Handed over while disconnected: replaces the one waiting.
        XCTAssertEqual(outbox.hand(fix(3)).outcomes.map(\.outcome), [.init(position: fix(2), result: .superseded)])
        // Older than the newest handed over: superseded at once, never sent.
        let late = outbox.hand(fix(2))
        XCTAssertNil(late.send)
        XCTAssertEqual(late.outcomes.map(\.outcome), [.init(position: fix(2), result: .superseded)])
        XCTAssertEqual(outbox.connected("c2", oldestTimestamp: 0).send?.0, fix(3))
    }

    func testARefusedFixIsReportedWithItsReasonAndNotSentAgain() {
        var outbox = Outbox()
        _ = outbox.connected("c1", oldestTimestamp: 0)
        guard let (_, id) = outbox.hand(fix(1)).send else { return XCTFail("not sent") }
        XCTAssertEqual(
            outbox.acknowledged(id, result: .refused(.invalidPosition, message: "position.lat is out of range"))?.outcome,
            .init(position: fix(1), result: .refused(.invalidPosition, message: "position.lat is out of range")))
        XCTAssertEqual(outbox.disconnected().map(\.outcome), [])
        XCTAssertNil(outbox.connected("c2", oldestTimestamp: 0).send, "nothing left to send")
    }

    func testAFixTooOldWhenTheConnectionComesIsDroppedAndStoppingDropsWhatIsPending() {
        var outbox = Outbox()
        _ = outbox.hand(fix(1))
        let connected = outbox.connected("c1", oldestTimestamp: fix(2).timestamp)
        XCTAssertNil(connected.send)
        XCTAssertEqual(connected.outcomes.map(\.outcome), [.init(position: fix(1), result: .dropped(reason: "too old to send"))])
        _ = outbox.hand(fix(3))
        XCTAssertEqual(outbox.stop().map(\.outcome), [.init(position: fix(3), result: .dropped(reason: "the publisher stopped before its ack"))])
    }

    func testEveryFixIsSettledOnceUnderItsOwnTicketEvenWhenTwoCarryTheSameTime() {
        var outbox = Outbox()
        _ = outbox.connected("c1", oldestTimestamp: 0)
        let first = outbox.hand(fix(1))
        // The same timestamp again: superseded at once, under its own ticket, not the pending fix's.
        let again = outbox.hand(fix(1))
        XCTAssertNotEqual(first.ticket, again.ticket)
        XCTAssertEqual(again.outcomes, [.init(ticket: again.ticket, outcome: .init(position: fix(1), result: .superseded))])
        let second = outbox.hand(fix(2))
        XCTAssertEqual(outbox.disconnected(), [.init(ticket: first.ticket, outcome: .init(position: fix(1), result: .superseded))])
        guard let (_, id) = outbox.connected("c2", oldestTimestamp: 0).send else { return XCTFail("the newest not sent again") }
        XCTAssertEqual(
            outbox.acknowledged(id, result: .accepted(seq: 3, audience: audience)),
            .init(ticket: second.ticket, outcome: .init(position: fix(2), result: .accepted(seq: 3, audience: audience))),
            "the ack after a reconnect settles the ticket the fix was handed over with")
    }

    func testAFixHandedOverAfterTheStopIsDroppedAtOnceInsteadOfWaitingForever() {
        var outbox = Outbox()
        _ = outbox.stop()
        let late = outbox.hand(fix(1))
        XCTAssertNil(late.send)
        XCTAssertEqual(late.outcomes, [.init(ticket: late.ticket, outcome: .init(position: fix(1), result: .dropped(reason: "the publisher stopped")))])
        XCTAssertNil(outbox.connected("c1", oldestTimestamp: 0).send, "a stopped outbox takes no connection")
        XCTAssertNil(outbox.waiting)
    }
}
