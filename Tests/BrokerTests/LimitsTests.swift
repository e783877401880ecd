import BrokerClient
import BrokerProtocol
import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

#if canImport(Glibc)
import Glibc
#endif

/// Each documented limit refuses what is over it, with its code, and counts it.
final class LimitsTests: XCTestCase {
    func testAnIdentityMayHoldOnlySoManyConnections() async throws {
        let live = try await startBroker { $0.maxConnectionsPerIdentity = 2 }
        let first = try await live.connect("donor@example.org")
        let second = try await live.connect("donor@example.org")
        let token = try await LiveBroker.token("donor@example.org")
        let third = try await live.request(.get, "/v1/ws", headers: [
            .connection: "Upgrade", .upgrade: "websocket", .secWebSocketVersion: "13", .secWebSocketKey: "dGhlIHNhbXBsZSBub25jZQ==",
            .authorization: "Bearer \(token)",
        ])
        XCTAssertEqual(third.status, .tooManyRequests)
        XCTAssertEqual(third.error?.code, .limitReached)
        // Another person is not affected, and closing one connection makes room again.
        _ = try await live.connect("someone@example.org")
        await first.close()
        try await waitUntil("the closed connection makes room for another") { live.broker.hub.mayConnect("donor@example.org") }
        _ = try await live.connect("donor@example.org")
        withExtendedLifetime(second) {}
        XCTAssertGreaterThanOrEqual(live.metric(#"broker_rejections_total{code="limit-reached"}"#) ?? 0, 1)
        try await live.stop()
    }

    func testAConnectionMayHoldOnlySoManySubscriptions() async throws {
        let live = try await startBroker { $0.maxSubscriptionsPerConnection = 2 }
        for index in 1...3 {
            try await live.put("d-\(index)", volunteer: "vol\(index)@example.org", state: .beingLookedFor)
        }
        let donor = try await live.connect("donor@example.org")
        for index in 1...2 {
            try await donor.send(.subscribe(.init(target: .donation("d-\(index)"))))
            guard case .subscribed = try await donor.next() else { return XCTFail("not subscribed to d-\(index)") }
        }
        try await donor.send(.subscribe(.init(id: "third", target: .donation("d-3"))))
        guard case .error(let refused) = try await donor.next() else { return XCTFail("a third subscription was accepted") }
        XCTAssertEqual(refused.code, .limitReached)
        // The same refusal for a donation that does not exist: the limit reveals nothing.
        try await donor.send(.subscribe(.init(id: "ghost", target: .donation("d-404"))))
        guard case .error(let ghost) = try await donor.next() else { return XCTFail("no refusal") }
        XCTAssertEqual(ghost.code, .limitReached)
        // Subscribing again to a donation already watched is not a new subscription.
        try await donor.send(.subscribe(.init(target: .donation("d-1"))))
        guard case .subscribed = try await donor.next() else { return XCTFail("re-subscribing was refused") }
        try await live.stop()
    }

    func testATokenThatExpiresWhileConnectedEndsTheConnectionWith4001() async throws {
        let live = try await startBroker()
        // Expired 28 s ago: still inside the 30 s leeway, so accepted (even if a second boundary passes between
        // minting and the handshake; with 29 s that made the test fail now and then), and closed within 2 s.
        let token = try await LiveBroker.token("donor@example.org", ttl: -28)
        let donor = try await BrokerConnection.connect(url: live.webSocketURL, token: token)
        guard case .welcome = try await donor.next() else { return XCTFail("no welcome") }
        guard case .closed(let code, let reason) = await donor.nextEvent(timeout: .seconds(10)) else {
            return XCTFail("the connection outlived its token")
        }
        XCTAssertEqual(code, 4001)
        XCTAssertEqual(reason, "token expired")
        let fresh = try await live.connect("donor@example.org")
        try await fresh.expectNothingPending()
        try await live.stop()
    }

    func testAClientThatSaysNothingIsDisconnectedAfterTheHandshakeTimeout() async throws {
        let live = try await startBroker { $0.handshakeTimeoutSeconds = 1 }
        let port = live.port
        // A bare TCP connection that says nothing; its blocking calls run on a thread of their own.
        let (connected, received) = try await blocking("the broker closes a silent connection", deadline: .now + .seconds(15)) {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            let connected = Loopback.connect(fd, port: port)
            // A blocking read returns 0 when the broker closes the silent socket.
            var byte: UInt8 = 0
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            return (connected, recv(fd, &byte, 1, 0))
        }
        XCTAssertEqual(connected, 0)
        XCTAssertEqual(received, 0, "the broker closed the connection")
        try await live.stop()
    }
}
