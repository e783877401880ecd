import BrokerClient
import BrokerProtocol
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

@testable import BrokerTestSupport
@testable import LocationBroker

/// Two and three `location-broker` processes sharing one real PostgreSQL: what a donor on one node sees of a
/// volunteer and a backend on others.
final class ClusterTests: XCTestCase {
    private let volunteerID = "vol@example.org"
    private let donorID = "donor@example.org"

    private func put(_ id: String, on node: BrokerProcess, state: DonationState, file: StaticString = #filePath, line: UInt = #line) async throws {
        try await ClusterFixture.put(id, on: node, donor: donorID, volunteer: volunteerID, state: state, file: file, line: line)
    }

    private func connect(_ identity: String, to node: BrokerProcess) async throws -> BrokerConnection {
        try await ClusterFixture.connect(identity, to: node)
    }

    private func subscribe(_ donor: BrokerConnection, to donation: String, since: Int64? = nil) async throws -> ServerFrame.Subscribed {
        try await ClusterFixture.subscribe(donor, to: donation, since: since)
    }

    private func nextPosition(_ donor: BrokerConnection) async throws -> ServerFrame.PositionUpdate {
        try await ClusterFixture.nextPosition(donor)
    }

    func testAPositionPublishedOnOneNodeReachesADonorOnAnother() async throws {
        let store = try await PostgresServer.shared().makeDatabase()
        let a = try await startNode("a", store: store)
        let b = try await startNode("b", store: store)
        try await put("d-1", on: a, state: .beingLookedFor)

        let donor = try await connect(donorID, to: b)
        let subscribed = try await subscribe(donor, to: "d-1")
        XCTAssertEqual(subscribed.state, .beingLookedFor)
        let volunteer = try await connect(volunteerID, to: a)
        var acknowledged: [Position] = []
        for metres in [1_500.0, 1_200, 900] {
            acknowledged.append(try await volunteer.publishKept(position(metresFromHome: metres)))
        }
        var delivered: [ServerFrame.PositionUpdate] = []
        for _ in acknowledged { delivered.append(try await nextPosition(donor)) }
        XCTAssertEqual(delivered.map(\.position), acknowledged, "the donor on node b gets every position")
        XCTAssertEqual(delivered.map(\.seq), delivered.indices.map { delivered[0].seq + Int64($0) }, "one after the other in the donor's view")

        // Last-known position and presence are visible from a node started after they were published.
        let c = try await startNode("c", store: store)
        let late = try await connect(donorID, to: c)
        let fromC = try await subscribe(late, to: "d-1")
        XCTAssertEqual(fromC.online, true)
        XCTAssertEqual(fromC.last?.position, acknowledged.last)
        XCTAssertEqual(fromC.last?.seq, delivered.last?.seq, "the same number on every node")
        let fourth = try await volunteer.publishKept(position(metresFromHome: 600))
        let onC = try await nextPosition(late)
        XCTAssertEqual(onC.position, fourth)
        let onB = try await nextPosition(donor)
        XCTAssertEqual(onB.position, fourth)
        XCTAssertEqual(onC.seq, onB.seq, "the same number on every node")
    }

    func testAStateChangeOnOneNodeRevokesAndPausesSubscribersOnOthers() async throws {
        let store = try await PostgresServer.shared().makeDatabase()
        let api = try await startNode("api", store: store)
        let donors = try await startNode("donors", store: store)
        let volunteers = try await startNode("volunteers", store: store)
        try await put("d-1", on: api, state: .beingLookedFor)
        let donor = try await connect(donorID, to: donors)
        _ = try await subscribe(donor, to: "d-1")
        let volunteer = try await connect(volunteerID, to: volunteers)
        let first = try await volunteer.publishKept(position(metresFromHome: 800))
        let got = try await nextPosition(donor).position
        XCTAssertEqual(got, first)

        // Picked up: the donor on another node is told the donation paused, and gets nothing while it is.
        try await put("d-1", on: api, state: .pickedByVolunteer)
        var frame = try await donor.next()
        while case .presence = frame { frame = try await donor.next() }
        guard case .state(let paused) = frame else { return XCTFail("expected a state frame, got \(frame)") }
        XCTAssertEqual(paused.state, .pickedByVolunteer)
        // The volunteer's node applies the change within a NOTIFY's delivery; until then it may still keep.
        try await waitUntil("the volunteer's node paused tracking") {
            try await volunteer.publish(position(metresFromHome: 20)).tracking == false
        }

        // Delivered: every subscriber anywhere is unsubscribed, and nothing more reaches them.
        try await put("d-1", on: api, state: .beingTakenTo)
        guard case .state(let resumed) = try await donor.next() else { return XCTFail("no resume") }
        XCTAssertEqual(resumed.state, .beingTakenTo)
        guard case .presence = try await donor.next() else { return XCTFail("no presence after the resume") }
        try await put("d-1", on: api, state: .delivered)
        guard case .unsubscribed(let ended) = try await donor.next() else { return XCTFail("no unsubscribed") }
        XCTAssertEqual(ended.reason, .delivered)
        try await waitUntil("the volunteer's node stopped tracking") {
            try await volunteer.publish(position(metresFromHome: 10)).tracking == false
        }
        try await donor.expectNothingPending()
    }

    func testDonorsOfAKilledNodeResumeOnAnotherWithoutAGap() async throws {
        let store = try await PostgresServer.shared().makeDatabase()
        let a = try await startNode("a", store: store)
        let b = try await startNode("b", store: store)
        try await put("d-1", on: a, state: .beingLookedFor)
        let volunteer = try await connect(volunteerID, to: a)
        let donor = try await connect(donorID, to: b)
        _ = try await subscribe(donor, to: "d-1")
        let first = try await volunteer.publishKept(position(metresFromHome: 2_000))
        let got = try await nextPosition(donor)
        XCTAssertEqual(got.position, first)

        // The donor's node dies; the volunteer keeps publishing; the donor comes back on node a with `since`.
        b.signal(SIGKILL)
        _ = await b.waitForExit(timeout: .seconds(10))
        var missed: [Position] = []
        for metres in [1_800.0, 1_600, 1_400] { missed.append(try await volunteer.publishKept(position(metresFromHome: metres))) }
        let resumed = try await connect(donorID, to: a)
        _ = try await subscribe(resumed, to: "d-1", since: got.seq)
        var replayed: [ServerFrame.PositionUpdate] = []
        for _ in missed { replayed.append(try await nextPosition(resumed)) }
        XCTAssertEqual(replayed.map(\.position), missed, "every position after `since`, none twice")

        // Now the volunteer's node dies too: on a third node their seqs keep growing, and the donor sees them.
        let c = try await startNode("c", store: store)
        let donorOnC = try await connect(donorID, to: c)
        _ = try await subscribe(donorOnC, to: "d-1")
        a.signal(SIGKILL)
        _ = await a.waitForExit(timeout: .seconds(10))
        let moved = try await connect(volunteerID, to: c)
        let next = try await moved.publishKept(position(metresFromHome: 1_200))
        let afterMove = try await nextPosition(donorOnC)
        XCTAssertEqual(afterMove.position, next)
        XCTAssertGreaterThan(afterMove.seq, replayed.last?.seq ?? 0, "the donor's seq stays monotonic when the volunteer moves to another node")
    }

    func testNodesReconnectAfterPostgresRestartsAndNothingAcknowledgedIsLost() async throws {
        let server = try await PostgresServer.shared()
        let store = try await server.makeDatabase()
        let a = try await startNode("a", store: store)
        let b = try await startNode("b", store: store)
        for index in 1...5 { try await put("d-\(index)", on: a, state: .beingLookedFor) }
        try await put("d-1", on: b, state: .pickedByVolunteer)

        try await server.stop()
        do {
            // While PostgreSQL is down the API says so, with a code a backend can retry on.
            let refused = try await LiveBroker.backend(
                port: a.port, .put, "/v1/donations/d-2", body: LiveBroker.donationJSON(donor: donorID, volunteer: volunteerID, state: .pickedByVolunteer))
            XCTAssertEqual(refused.status, .serviceUnavailable)
            XCTAssertEqual(refused.error?.code, .unavailable)
        } catch {
            try? await server.start()  // the server is shared: the next tests need it up
            throw error
        }
        try await server.start()

        // Every acknowledged change is there, read through either node.
        for node in [a, b] {
            let one = try await LiveBroker.backend(port: node.port, .get, "/v1/donations/d-1")
            XCTAssertEqual(try JSONDecoder().decode(Donation.self, from: Data(buffer: one.body ?? .init())).state, .pickedByVolunteer)
            for index in 2...5 {
                let other = try await LiveBroker.backend(port: node.port, .get, "/v1/donations/d-\(index)")
                XCTAssertEqual(try JSONDecoder().decode(Donation.self, from: Data(buffer: other.body ?? .init())).state, .beingLookedFor)
            }
        }
        // The bus is back: a change and a position cross nodes again.
        let donor = try await connect(donorID, to: b)
        _ = try await subscribe(donor, to: "d-2")
        let volunteer = try await connect(volunteerID, to: a)
        try await waitUntil("a position from node a reaches the donor on node b") {
            let fix = try await volunteer.publishKept(position(metresFromHome: 500))
            while let event = await donor.nextEvent(timeout: .milliseconds(500)) {
                if case .frame(.position(let update), _) = event, update.position == fix { return true }
            }
            return false
        }
        try await put("d-2", on: a, state: .cancelled)
        var frame = try await donor.next()
        while case .presence = frame { frame = try await donor.next() }
        guard case .unsubscribed(let ended) = frame else { return XCTFail("expected unsubscribed, got \(frame)") }
        XCTAssertEqual(ended.reason, .cancelled)
    }
}
