import BrokerClient
import BrokerProtocol
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// Donors who drop off come back without gaps; the broker keeps donations across restarts and closes
/// sockets properly when it stops.
final class RecoveryTests: XCTestCase {
    private let volunteerID = "vol@example.org"

    private func positions(_ connection: BrokerConnection, count: Int) async throws -> [ServerFrame.PositionUpdate] {
        var updates: [ServerFrame.PositionUpdate] = []
        while updates.count < count {
            let frame = try await connection.next()
            if case .position(let update) = frame { updates.append(update) }
        }
        return updates
    }

    func testADonorWhoReconnectsWithSinceMissesNothing() async throws {
        let live = try await startBroker { $0.publishRate = 1000; $0.publishBurst = 1000 }
        try await live.put("d-1", state: .beingLookedFor)
        let volunteer = try await live.connect(volunteerID)
        var donor = try await live.connect("donor@example.org")
        try await donor.send(.subscribe(.init(target: .donation("d-1"))))
        _ = try await donor.next()
        var published: [Position] = []
        for step in 0..<3 { published.append(try await volunteer.publishKept(position(metresFromHome: 3_000 - Double(step) * 100))) }
        let seen = try await positions(donor, count: 3)
        XCTAssertEqual(seen.map(\.position), published)

        // The phone loses its connection; the volunteer keeps driving.
        await donor.close()
        for step in 3..<6 { published.append(try await volunteer.publishKept(position(metresFromHome: 3_000 - Double(step) * 100))) }

        donor = try await live.connect("donor@example.org")
        try await donor.send(.subscribe(.init(id: "again", target: .donation("d-1"), since: seen.last?.seq)))
        guard case .subscribed(let subscribed) = try await donor.next() else { return XCTFail("not subscribed") }
        XCTAssertEqual(subscribed.last?.position, published.last)
        let recovered = try await positions(donor, count: 3)
        XCTAssertEqual((seen + recovered).map(\.position), published, "no gap and no duplicate")
        XCTAssertEqual((seen + recovered).map(\.seq), (0..<6).map { seen[0].seq + Int64($0) }, "one after the other in the donor's view")
        XCTAssertEqual(subscribed.last?.seq, recovered.last?.seq)
        let live7 = try await volunteer.publishKept(position(metresFromHome: 2_000))
        let afterwards = try await positions(donor, count: 1)
        XCTAssertEqual(afterwards.map(\.position), [live7])
        try await live.stop()
    }

    func testOneVolunteerTwoDonorsEachSeesOnlyTheirOwnWindow() async throws {
        let live = try await startBroker { $0.publishRate = 1000; $0.publishBurst = 1000 }
        try await live.put("d-a", donor: "ana@example.org", state: .beingLookedFor)
        try await live.put("d-b", donor: "bruno@example.org", state: .created)
        let volunteer = try await live.connect(volunteerID)
        let ana = try await live.connect("ana@example.org")
        let bruno = try await live.connect("bruno@example.org")
        try await ana.send(.subscribe(.init(target: .donation("d-a"))))
        guard case .subscribed = try await ana.next() else { return XCTFail("ana not subscribed") }

        // Kept while only Ana's donation is trackable.
        let onlyAna = try await volunteer.publishKept(position(metresFromHome: 900))

        // Bruno's donation starts: he must not receive what was kept for Ana, neither as last nor with since.
        try await live.put("d-b", donor: "bruno@example.org", state: .beingLookedFor)
        try await bruno.send(.subscribe(.init(target: .donation("d-b"), since: 0)))
        guard case .subscribed(let brunos) = try await bruno.next() else { return XCTFail("bruno not subscribed") }
        XCTAssertNil(brunos.last)
        try await bruno.expectNothingPending()

        let both = try await volunteer.publishKept(position(metresFromHome: 800))
        let brunosFirst = try await positions(bruno, count: 1)
        XCTAssertEqual(brunosFirst.map(\.position), [both])

        // Ana's donation pauses: Bruno keeps receiving, Ana receives nothing more.
        try await live.put("d-a", donor: "ana@example.org", state: .deliveredByDonor)
        let onlyBruno = try await volunteer.publishKept(position(metresFromHome: 700))
        let brunosSecond = try await positions(bruno, count: 1)
        XCTAssertEqual(brunosSecond.map(\.position), [onlyBruno])
        XCTAssertEqual(brunosSecond.map(\.seq), brunosFirst.map { $0.seq + 1 }, "Bruno's numbers count nothing kept for Ana alone")
        var anasFrames: [ServerFrame] = []
        while anasFrames.last?.type != "state" { anasFrames.append(try await ana.next()) }
        XCTAssertEqual(anasFrames.compactMap { if case .position(let p) = $0 { p.position } else { nil } }, [onlyAna, both])
        try await ana.expectNothingPending()

        // Ana resumes and asks for everything: she gets nothing kept while her donation was paused.
        try await live.put("d-a", donor: "ana@example.org", state: .beingTakenTo)
        _ = try await ana.next()  // state: resumed
        _ = try await ana.next()  // presence, untold during the pause
        try await ana.send(.subscribe(.init(target: .donation("d-a"), since: 0)))
        guard case .subscribed(let anas) = try await ana.next() else { return XCTFail("ana not subscribed again") }
        XCTAssertNil(anas.last, "positions kept for Ana were forgotten when her donation paused")
        try await ana.expectNothingPending()
        try await live.stop()
    }

    func testARestartKeepsEveryDonation() async throws {
        let first = try await startBroker()
        let states: [(String, DonationState, String?)] = [
            ("d-created", .created, nil), ("d-assigned", .created, "vol@example.org"), ("d-looked", .beingLookedFor, "vol@example.org"),
            ("d-picked", .pickedByVolunteer, "v2@example.org"), ("d-taken", .beingTakenTo, "v3@example.org"),
            ("d-done", .delivered, "v4@example.org"), ("d-cancelled", .cancelled, nil),
        ]
        var stored: [String: Donation] = [:]
        for (id, state, volunteer) in states {
            let response = try await first.put(id, volunteer: volunteer, state: state)
            stored[id] = try JSONDecoder().decode(Donation.self, from: Data(buffer: response.body ?? .init()))
        }
        try await first.stop()

        let second = try await startBroker(database: first.database)
        for (id, _, _) in states {
            let response = try await second.backend(.get, "/v1/donations/\(id)")
            XCTAssertEqual(response.status, .ok, id)
            let restored = try JSONDecoder().decode(Donation.self, from: Data(buffer: response.body ?? .init()))
            XCTAssertEqual(restored, stored[id], id)
        }
        // The gates came back too: the donor of the trip in progress can watch it.
        let donor = try await second.connect("donor@example.org")
        try await donor.send(.subscribe(.init(target: .donation("d-looked"))))
        guard case .subscribed(let subscribed) = try await donor.next() else { return XCTFail("gates were not rebuilt") }
        XCTAssertEqual(subscribed.state, .beingLookedFor)
        try await second.stop()
    }

    func testStoppingClosesEverySocketWith1001AndRefusesNewOnes() async throws {
        let live = try await startBroker()
        let donor = try await live.connect("donor@example.org")
        let volunteer = try await live.connect(volunteerID)
        try await live.stop()
        for connection in [donor, volunteer] {
            guard case .closed(let code, _) = await connection.nextEvent() else { return XCTFail("not closed") }
            XCTAssertEqual(code, 1001)
        }
    }

    func testTheDrainRefusesNewSocketsWith503() async throws {
        let live = try await startBroker()
        live.broker.draining.start()
        let token = try await LiveBroker.token("donor@example.org")
        let response = try await live.request(.get, "/v1/ws", headers: [
            .connection: "Upgrade", .upgrade: "websocket", .secWebSocketVersion: "13", .secWebSocketKey: "dGhlIHNhbXBsZSBub25jZQ==",
            .authorization: "Bearer \(token)",
        ])
        XCTAssertEqual(response.status, .serviceUnavailable)
        XCTAssertEqual(response.error?.code, .unavailable)
        let health = try await live.request(.get, "/healthz")
        XCTAssertEqual(health.status, .serviceUnavailable)
        try await live.stop()
    }
}
