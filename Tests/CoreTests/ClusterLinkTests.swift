import BrokerProtocol
import NIOConcurrencyHelpers
import XCTest

@testable import BrokerCore

/// The hub's side of a cluster, through a fake link: what it announces, the subscriptions it lets wait for the
/// bus, and what it takes in from other nodes.
final class ClusterLinkTests: XCTestCase {
    /// A bus that records announcements and keeps every subscription waiting until told otherwise.
    private final class FakeLink: ClusterLink {
        struct Announced: Equatable {
            var channel: String
            var seq: Int64
            var donations: [String]
        }

        let positions = NIOLockedValueBox<[Announced]>([])
        let offline = NIOLockedValueBox<[String]>([])
        let waiting = NIOLockedValueBox<[WaitingSubscription]>([])
        let listening = NIOLockedValueBox(false)

        func announcePosition(channel: String, seq: Int64, position: Position, donations: [String], viewSeqs: [Int64], seenAt: Int64) {
            positions.withLockedValue { $0.append(Announced(channel: channel, seq: seq, donations: donations)) }
        }
        func announceOffline(channel: String, lastSeen: Int64?) { offline.withLockedValue { $0.append(channel) } }
        func admitSubscription(_ subscription: WaitingSubscription) -> Bool {
            if listening.withLockedValue({ $0 }) { return true }
            waiting.withLockedValue { $0.append(subscription) }
            return false
        }
        func withdrawSubscription(connection: UInt64, channel: String?, donation: String?) -> WaitingSubscription? {
            waiting.withLockedValue { waiting in
                guard let index = waiting.firstIndex(where: { $0.connection.id == connection && (donation == nil || $0.donation == donation) })
                else { return nil }
                return waiting.remove(at: index)
            }
        }
    }

    func testAPublishIsAnnouncedForTheAdmittedDonationsAndTheLastConnectionsEndToo() throws {
        let link = FakeLink()
        link.listening.withLockedValue { $0 = true }
        let fixture = HubFixture(cluster: link)
        fixture.move(to: .beingLookedFor)
        let (volunteer, _) = fixture.connect(fixture.volunteer)
        let seq = try XCTUnwrap(try fixture.publish().get().seq)
        fixture.clock.advance(by: 1_000)
        XCTAssertNil(try fixture.publish(takenAt: fixture.clock.now - 600_001).get().seq, "too old: kept for nobody, told to nobody")
        XCTAssertEqual(link.positions.withLockedValue { $0 }, [.init(channel: fixture.volunteer, seq: seq, donations: ["d-1"])])
        fixture.hub.disconnect(volunteer)
        XCTAssertEqual(link.offline.withLockedValue { $0 }, [fixture.volunteer])
    }

    func testASubscriptionWaitsForTheBusAndIsAnsweredWithWhatTheClusterKept() throws {
        let link = FakeLink()
        let fixture = HubFixture(cluster: link)
        fixture.move(to: .beingLookedFor)
        let (connection, sink) = fixture.connect()
        XCTAssertNil(fixture.hub.subscribe(connection, .init(id: "s1", target: .donation("d-1"))))
        XCTAssertEqual(try sink.frames(), [], "not answered before this node listens to the volunteer's shard")

        // The shard's stored last position is read, then the waiting subscription is answered.
        fixture.clock.advance(by: 1_000)
        let kept = position(metresFromHome: 900, timestamp: fixture.clock.now)
        fixture.hub.takeInStored([LastPosition(channel: fixture.volunteer, seq: 7, position: kept, donations: ["d-1"], viewSeqs: [7], seenAt: fixture.clock.now)])
        link.listening.withLockedValue { $0 = true }
        fixture.hub.completePending(link.waiting.withLockedValue { $0 })
        guard case .subscribed(let view) = try sink.frames().first else { return XCTFail("not answered") }
        XCTAssertEqual(view.last?.seq, 7)
        XCTAssertEqual(view.online, true)
    }

    func testASubscriptionWithdrawnBeforeItsAnswerIsEndedAndNeverAnswered() throws {
        let link = FakeLink()
        let fixture = HubFixture(cluster: link)
        fixture.move(to: .beingLookedFor)
        let (connection, sink) = fixture.connect()
        XCTAssertNil(fixture.hub.subscribe(connection, .init(id: "s1", target: .donation("d-1"))))
        XCTAssertNil(fixture.hub.unsubscribe(connection, .init(id: "u1", target: .donation("d-1"))))
        guard case .unsubscribed(let end) = try sink.frames().first else { return XCTFail("no unsubscribed") }
        XCTAssertEqual(end.re, "u1")
        fixture.hub.completePending(link.waiting.withLockedValue { $0 })
        XCTAssertEqual(try sink.frames(), [], "nothing waited any more")
    }

    func testAnOlderPositionFromAnotherNodeIsNotKeptTwice() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        let (_, sink) = try fixture.watcher()
        fixture.clock.advance(by: 1_000)
        let fix = position(metresFromHome: 900, timestamp: fixture.clock.now)
        fixture.hub.receiveRemotePosition(channel: fixture.volunteer, seq: 10, position: fix, donations: ["d-1"], viewSeqs: nil, seenAt: fixture.clock.now)
        fixture.hub.receiveRemotePosition(channel: fixture.volunteer, seq: 10, position: fix, donations: ["d-1"], viewSeqs: nil, seenAt: fixture.clock.now)
        fixture.hub.receiveRemotePosition(channel: fixture.volunteer, seq: 9, position: fix, donations: ["d-1"], viewSeqs: nil, seenAt: fixture.clock.now)
        XCTAssertEqual(try sink.frames().map(\.type), ["presence", "position"])
        // Another node's volunteer going offline while they are connected here changes nothing.
        _ = fixture.connect(fixture.volunteer)
        fixture.hub.receiveRemoteOffline(channel: fixture.volunteer, lastSeen: fixture.clock.now)
        XCTAssertEqual(try sink.frames(), [])
    }
}
