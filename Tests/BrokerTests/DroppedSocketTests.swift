import BrokerClient
import BrokerProtocol
import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// Phones lose sockets without a goodbye: the system kills the app, a tab is discarded, the app crashes. The TCP
/// connection then ends with a FIN and no WebSocket close frame. The broker must free what the socket held at once,
/// not at its next heartbeat.
final class DroppedSocketTests: XCTestCase {
    func testADonorWhoseSocketsDropWithoutACloseCanReconnectAtOnce() async throws {
        let live = try await startBroker { $0.maxConnectionsPerIdentity = 4 }
        let token = try await LiveBroker.token("donor@example.org")
        for round in 1...4 {
            var sockets: [RawWebSocket] = []
            for _ in 1...4 { sockets.append(try await RawWebSocket.connect(port: live.port, token: token)) }
            try await waitUntil("round \(round)'s four sockets are open", deadline: .now + .seconds(5)) {
                live.metric("broker_connections") == 4
            }
            // The reload on a bad network: every socket ends with a FIN, none with a close frame.
            for socket in sockets { socket.shutdownOutput() }
            try await waitUntil("round \(round)'s four slots are freed within a second", deadline: .now + .seconds(1)) {
                live.metric("broker_connections") == 0 && live.broker.hub.mayConnect("donor@example.org")
            }
            for socket in sockets {
                let closed = try await socket.serverClosed(timeout: .seconds(1))
                XCTAssertTrue(closed, "round \(round): the broker closed its side")
            }
        }
    }

    func testTheDonorHearsOfflineWithinASecondWhenTheVolunteersSocketDrops() async throws {
        let live = try await startBroker()
        try await live.put("d-1", donor: "donor@example.org", volunteer: "vol@example.org", state: .beingLookedFor)
        let donor = try await live.connect("donor@example.org")
        try await donor.send(.subscribe(.init(id: "s", target: .donation("d-1"))))
        guard case .subscribed = try await donor.next() else { return XCTFail("not subscribed") }

        let volunteer = try await RawWebSocket.connect(port: live.port, token: try await LiveBroker.token("vol@example.org"))
        let fix = position(metresFromHome: 900)
        try await volunteer.sendText(String(decoding: try JSONEncoder().encode(ClientFrame.publish(.init(id: "p", position: fix))), as: UTF8.self))
        guard case .presence(let online) = try await donor.next() else { return XCTFail("no presence online") }
        XCTAssertTrue(online.online)
        guard case .position = try await donor.next() else { return XCTFail("no position") }

        volunteer.shutdownOutput()
        let dropped = ContinuousClock.now
        guard case .presence(let offline) = try await donor.next(timeout: .seconds(1)) else { return XCTFail("no presence offline") }
        XCTAssertFalse(offline.online)
        XCTAssertLessThan(ContinuousClock.now - dropped, .seconds(1), "offline is told when the socket drops, not at a heartbeat")
        await donor.close()
    }
}
