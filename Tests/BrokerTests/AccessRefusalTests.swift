import BrokerClient
import BrokerProtocol
import HTTPTypes
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// Every way of asking for what one may not have is refused, precisely, and reveals nothing about others.
final class AccessRefusalTests: XCTestCase {
    private var live: LiveBroker!

    override func setUp() async throws {
        live = try await LiveBroker.start()
        try await live.put("d-1", donor: "donor@example.org", volunteer: "vol@example.org", state: .beingLookedFor)
        try await live.put("d-2", donor: "donor@example.org", volunteer: "late@example.org", state: .created)
    }

    override func tearDown() async throws {
        try await live.stop()
    }

    private func refusal(_ connection: BrokerConnection, _ request: ClientFrame.Subscribe) async throws -> ServerFrame.ErrorReply? {
        try await connection.send(.subscribe(request))
        guard case .error(let error) = try await connection.next() else { return nil }
        return error
    }

    func testAnotherDonorLearnsNothing() async throws {
        let stranger = try await live.connect("stranger@example.org")
        let byChannel = try await refusal(stranger, .init(id: "a", target: .channel("vol@example.org")))
        let unknownChannel = try await refusal(stranger, .init(id: "b", target: .channel("nobody@example.org")))
        XCTAssertEqual(byChannel?.code, .forbidden)
        XCTAssertEqual(byChannel?.re, "a")
        XCTAssertEqual(byChannel?.message, unknownChannel?.message, "a real channel and a missing one are refused alike")

        let byDonation = try await refusal(stranger, .init(id: "c", target: .donation("d-1")))
        let missingDonation = try await refusal(stranger, .init(id: "d", target: .donation("d-404")))
        let notTrackableDonation = try await refusal(stranger, .init(id: "e", target: .donation("d-2")))
        XCTAssertEqual(byDonation?.code, .notFound)
        XCTAssertEqual(missingDonation?.code, .notFound)
        XCTAssertEqual(notTrackableDonation?.code, .notFound)
        XCTAssertEqual(byDonation?.message, "no donation d-1 of yours is known to the broker")
        XCTAssertEqual(missingDonation?.message, "no donation d-404 of yours is known to the broker")
    }

    func testTheDonorCannotWatchAnotherVolunteer() async throws {
        let donor = try await live.connect("donor@example.org")
        let refused = try await refusal(donor, .init(target: .channel("someone-else@example.org")))
        XCTAssertEqual(refused?.code, .forbidden)
    }

    func testTheDonorIsToldWhenTheirOwnDonationIsNotTrackable() async throws {
        let donor = try await live.connect("donor@example.org")
        let refused = try await refusal(donor, .init(target: .donation("d-2")))
        XCTAssertEqual(refused?.code, .notTrackable)
        XCTAssertEqual(refused?.message, "your donation d-2 is CREATED; it can be watched while BEING-LOOKED-FOR or BEING-TAKEN-TO")
        let byChannel = try await refusal(donor, .init(target: .channel("late@example.org")))
        XCTAssertEqual(byChannel?.code, .notTrackable)
    }

    func testTheVolunteerCannotWatchThemselvesNorPublishForOthers() async throws {
        let volunteer = try await live.connect("vol@example.org")
        let ownChannel = try await refusal(volunteer, .init(target: .channel("vol@example.org")))
        XCTAssertEqual(ownChannel?.code, .forbidden)
        let impostor = try await live.connect("mallory@example.org")
        try await impostor.send(.publish(.init(id: "p1", channel: "vol@example.org", position: position(metresFromHome: 50))))
        guard case .error(let error) = try await impostor.next() else { return XCTFail("publish on another channel was accepted") }
        XCTAssertEqual(error.code, .forbidden)
        XCTAssertEqual(error.re, "p1")
    }

    func testUpgradesWithoutAValidTokenGet401AndNoSocket() async throws {
        let upgrade: HTTPFields = [.connection: "Upgrade", .upgrade: "websocket", .secWebSocketVersion: "13", .secWebSocketKey: "dGhlIHNhbXBsZSBub25jZQ=="]
        let expired = try await LiveBroker.token("donor@example.org", ttl: -3600)
        let forged = try await LiveBroker.token("donor@example.org", secret: "another-secret-0123456789-0123456789-x")
        let cases: [(String, String?, String)] = [
            ("no token", nil, "no token: send Authorization: Bearer <JWT>, or ?token=<JWT> from a browser"),
            ("expired", expired, "the token has expired"),
            ("bad signature", forged, "the token's signature is not valid"),
            ("garbage", "not.a.jwt", "the token is not a well-formed JWT"),
        ]
        for (name, token, message) in cases {
            var headers = upgrade
            if let token { headers[.authorization] = "Bearer \(token)" }
            let response = try await live.request(.get, "/v1/ws", headers: headers)
            XCTAssertEqual(response.status, .unauthorized, name)
            XCTAssertEqual(response.error, BrokerError(.unauthorized, message), name)
            do {
                _ = try await BrokerConnection.connect(url: live.webSocketURL, token: token)
                XCTFail("\(name): the upgrade succeeded")
            } catch {}
        }
        let viaQuery = try await live.request(.get, "/v1/ws?token=\(forged)", headers: upgrade)
        XCTAssertEqual(viaQuery.status, .unauthorized)
        XCTAssertEqual(live.metric(#"broker_rejections_total{code="unauthorized"}"#), 9, "every refused upgrade is counted")
    }

    func testATokenInTheQueryStringOpensASocket() async throws {
        let token = try await LiveBroker.token("donor@example.org")
        let connection = try await BrokerConnection.connect(url: live.webSocketURL + "?token=\(token)", token: nil)
        guard case .welcome(let welcome) = try await connection.next() else { return XCTFail("no welcome") }
        XCTAssertEqual(welcome.identity, "donor@example.org")
    }

    func testTheBackendAPINeedsTheBackendKey() async throws {
        let body = LiveBroker.donationJSON(donor: "d@x.org", volunteer: nil, state: .created)
        let wrongKey = try await live.backend(.put, "/v1/donations/d-9", body: body, key: "wrong-key-wrong-key-wrong-key-wrong-key")
        XCTAssertEqual(wrongKey.status, .unauthorized)
        XCTAssertEqual(wrongKey.error?.code, .unauthorized)
        let noKey = try await live.request(.get, "/v1/donations/d-1")
        XCTAssertEqual(noKey.status, .unauthorized)
        // A client token is not a backend key.
        let clientToken = try await LiveBroker.token("donor@example.org")
        let withClientToken = try await live.backend(.get, "/v1/donations/d-1", key: clientToken)
        XCTAssertEqual(withClientToken.status, .unauthorized)
        let notStored = try await live.backend(.get, "/v1/donations/d-9")
        XCTAssertEqual(notStored.status, .notFound, "nothing was stored by the refused PUT")
    }

    func testIllegalMovesAndBadBodiesAreRefusedWithReasons() async throws {
        let illegal = try await live.backend(.put, "/v1/donations/d-1", body: LiveBroker.donationJSON(donor: "donor@example.org", volunteer: "vol@example.org", state: .delivered))
        XCTAssertEqual(illegal.status, .conflict)
        XCTAssertEqual(illegal.error, BrokerError(.illegalTransition, "a donation cannot move from BEING-LOOKED-FOR to DELIVERED"))
        let newDonor = try await live.backend(.put, "/v1/donations/d-1", body: LiveBroker.donationJSON(donor: "thief@example.org", volunteer: "vol@example.org", state: .beingLookedFor))
        XCTAssertEqual(newDonor.status, .conflict)
        let badBodies: [(String, String)] = [
            ("{", "the body is not valid JSON"),
            (#"{"donor":"a@x.org","volunteer":null,"state":"CREATED"}"#, "home is required"),
            (#"{"donor":"a@x.org","volunteer":null,"state":"LOST","home":{"lat":1,"lon":2}}"#, "state must be one of CREATED, BEING-LOOKED-FOR, DELIVERED-BY-DONOR, PICKED-BY-VOLUNTEER, BEING-TAKEN-TO, DELIVERED, CANCELLED"),
            (#"{"donor":"a@x.org","volunteer":null,"state":"CREATED","home":{"lat":"x","lon":2}}"#, "home.lat has the wrong type"),
        ]
        for (body, message) in badBodies {
            let response = try await live.backend(.put, "/v1/donations/d-3", body: body)
            XCTAssertEqual(response.status, .badRequest, body)
            XCTAssertEqual(response.error?.message, message, body)
        }
        let badID = try await live.backend(.put, "/v1/donations/d%201", body: LiveBroker.donationJSON(donor: "a@x.org", volunteer: nil, state: .created))
        XCTAssertEqual(badID.status, .badRequest)
        // The donation is as it was.
        let stored = try await live.backend(.get, "/v1/donations/d-1")
        XCTAssertEqual(try JSONDecoder().decode(Donation.self, from: Data(buffer: stored.body ?? .init())).state, .beingLookedFor)
    }

    func testPublishingTooFastIsRateLimited() async throws {
        let volunteer = try await live.connect("vol@example.org")
        var limited: ServerFrame.ErrorReply?
        for index in 0..<10 {
            try await volunteer.send(.publish(.init(id: "p\(index)", position: position(metresFromHome: 500))))
            if case .error(let error) = try await volunteer.next() {
                limited = error
                break
            }
        }
        XCTAssertEqual(limited?.code, .rateLimited)
        XCTAssertEqual(limited?.re, "p5", "the burst of 5 passes, the sixth is refused")
    }
}
