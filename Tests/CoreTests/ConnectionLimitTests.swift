import BrokerProtocol
import XCTest

@testable import BrokerCore

/// Connections: presence with the last one, 4001 when the token expires, and every per-connection limit.
final class ConnectionLimitTests: XCTestCase {
    func testTheVolunteerGoesOfflineWithTheLastConnectionOnly() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        let (_, sink) = try fixture.watcher()
        let (first, _) = fixture.connect(fixture.volunteer)
        let (second, _) = fixture.connect(fixture.volunteer)
        fixture.publish()
        XCTAssertEqual(try sink.frames().map(\.type), ["presence", "position"])
        fixture.hub.disconnect(first)
        XCTAssertEqual(try sink.frames(), [], "one connection is still open")
        fixture.hub.disconnect(second)
        fixture.hub.disconnect(second)
        let frames = try sink.frames()
        XCTAssertEqual(frames, [.presence(.init(channel: fixture.volunteer, online: false, lastSeen: fixture.clock.now))], "told once")
        XCTAssertEqual(fixture.metrics.counts.closed, 2)
    }

    func testAnExpiredTokenClosesTheConnectionWith4001AfterTheLeeway() throws {
        let fixture = HubFixture()
        let expiresAt = fixture.clock.now / 1000 + 60
        let (_, sink) = fixture.connect(expiresAt: expiresAt)
        fixture.clock.advance(by: (60 + TokenLeeway.seconds) * 1000 - 1_000)
        fixture.hub.closeExpiredConnections()
        XCTAssertFalse(sink.isClosing, "within the leeway")
        fixture.clock.advance(by: 1_000)
        fixture.hub.closeExpiredConnections()
        XCTAssertEqual(try sink.frames(), [.error(.init(re: nil, code: .unavailable, message: "close 4001 token expired"))])
    }

    func testAnIdentityOverItsConnectionLimitIsClosedAtOnce() throws {
        let fixture = HubFixture { $0.maxConnectionsPerIdentity = 2 }
        XCTAssertTrue(fixture.hub.mayConnect(fixture.donor))
        _ = fixture.connect()
        _ = fixture.connect()
        XCTAssertFalse(fixture.hub.mayConnect(fixture.donor), "refused at the handshake")
        // Two upgrades raced past the handshake's check: the later one is closed.
        let (_, third) = fixture.connect()
        XCTAssertEqual(try third.frames(), [.error(.init(re: nil, code: .unavailable, message: "close 4029 too many connections for this identity"))])
        XCTAssertEqual(fixture.metrics.counts.rejected[.limitReached], 1)
        XCTAssertEqual(fixture.metrics.counts.accepted, 2)
    }

    func testAConnectionMayHoldOnlyTheConfiguredNumberOfSubscriptions() throws {
        let fixture = HubFixture { $0.maxSubscriptionsPerConnection = 2 }
        for index in 0..<3 { fixture.move("d-\(index)", to: .beingLookedFor, volunteer: "vol-\(index)@example.org") }
        let (connection, _) = fixture.connect()
        XCTAssertNil(fixture.hub.subscribe(connection, .init(target: .donation("d-0"))))
        XCTAssertNil(fixture.hub.subscribe(connection, .init(target: .donation("d-1"))))
        XCTAssertEqual(fixture.hub.subscribe(connection, .init(target: .donation("d-2")))?.code, .limitReached)
        XCTAssertNil(fixture.hub.subscribe(connection, .init(target: .donation("d-1"))), "subscribing again to one held is no new subscription")
        // The limit is checked before anything is looked up: an unknown donation gets the same answer.
        XCTAssertEqual(fixture.hub.subscribe(connection, .init(target: .donation("nope")))?.code, .limitReached)
    }

    func testPublishingFasterThanTheRateIsRefusedAndRefillsWithTime() throws {
        let fixture = HubFixture { $0.publishRate = 2; $0.publishBurst = 2 }
        XCTAssertNoThrow(try fixture.publish().get())
        XCTAssertNoThrow(try fixture.publish().get())
        guard case .failure(let refusal) = fixture.publish() else { return XCTFail("a third publish at once was accepted") }
        XCTAssertEqual(refusal.code, .rateLimited)
        fixture.clock.advance(by: 500)
        XCTAssertNoThrow(try fixture.publish().get(), "half a second later, one token")
    }

    func testSomeoneElsesDonationIsRefusedAsIfItDidNotExist() throws {
        let fixture = HubFixture()
        fixture.move(to: .beingLookedFor)
        let (stranger, _) = fixture.connect("eve@example.org")
        XCTAssertEqual(fixture.hub.subscribe(stranger, .init(target: .donation("d-1")))?.message, "no donation d-1 of yours is known to the broker")
        XCTAssertEqual(fixture.hub.subscribe(stranger, .init(target: .donation("d-2")))?.message, "no donation d-2 of yours is known to the broker")
        XCTAssertEqual(fixture.hub.subscribe(stranger, .init(target: .channel(fixture.volunteer)))?.code, .forbidden)
    }
}
