import BrokerClient
import BrokerProtocol
import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// Donation changes reach every node whatever the bus loses on the way, and whatever their size.
final class ClusterCatchUpTests: XCTestCase {
    private let volunteerID = "vol@example.org"
    private let donorID = "donor@example.org"

    /// The listening sessions are cut while no new connection is allowed; meanwhile node B delivers one donation
    /// and node A changes another (so A's highest applied revision is past B's change). When connections are
    /// allowed again, node A must still apply B's change and revoke the donor it serves.
    func testACutListenerCatchesUpOnAChangeCommittedElsewhereBeforeItsOwn() async throws {
        let server = try await PostgresServer.shared()
        let store = try await server.makeDatabase()
        let database = ClusterFixture.databaseName(store)
        let a = try await startNode("a", store: store)
        let b = try await startNode("b", store: store)
        for state in [DonationState.beingLookedFor, .pickedByVolunteer, .beingTakenTo] {
            try await ClusterFixture.put("d-1", on: a, donor: donorID, volunteer: volunteerID, state: state)
        }
        try await ClusterFixture.put("d-2", on: a, donor: "other.donor@example.org", volunteer: volunteerID, state: .beingLookedFor)
        let donor = try await ClusterFixture.connect(donorID, to: a)
        _ = try await ClusterFixture.subscribe(donor, to: "d-1")
        // Node b has applied both donations (it is told of d-2 after d-1).
        let watcher = try await ClusterFixture.connect("other.donor@example.org", to: b)
        _ = try await ClusterFixture.subscribe(watcher, to: "d-2")
        await watcher.close()

        try await server.psql("ALTER DATABASE \(database) ALLOW_CONNECTIONS false")
        do {
            let cut = try await server.psql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)' AND query ILIKE 'listen%'")
            XCTAssertEqual(cut.split(separator: "\n").filter { $0 == "t" }.count, 2, "both nodes' listening sessions were cut")
            try await waitUntil("node a says it is not connected to the cluster") {
                try await ClusterFixture.metric("broker_cluster_connected", of: a) == 0
            }
            try await ClusterFixture.put("d-1", on: b, donor: donorID, volunteer: volunteerID, state: .delivered)
            try await ClusterFixture.put("d-2", on: a, donor: "other.donor@example.org", volunteer: volunteerID, state: .pickedByVolunteer)
        } catch {
            _ = try? await server.psql("ALTER DATABASE \(database) ALLOW_CONNECTIONS true")
            throw error
        }
        try await server.psql("ALTER DATABASE \(database) ALLOW_CONNECTIONS true")

        let deadline = ContinuousClock.now + .seconds(15)
        while true {
            guard ContinuousClock.now < deadline else { return XCTFail("node a never revoked the donor of the delivered donation") }
            let frame = try await donor.next(timeout: .seconds(15))
            if case .unsubscribed(let ended) = frame {
                XCTAssertEqual(ended.reason, .delivered)
                break
            }
        }
        try await waitUntil("node a is connected again") { try await ClusterFixture.metric("broker_cluster_connected", of: a) == 1 }
        let volunteer = try await ClusterFixture.connect(volunteerID, to: a)
        let ack = try await volunteer.publish(position(metresFromHome: 300))
        XCTAssertFalse(ack.tracking, "no donation of the volunteer is trackable on node a any more")
    }

    /// The listening session stays up, but the node can no longer make its heartbeat's round trip (its pool's
    /// sessions are cut while no new connection is allowed): the node must say it is not connected, and catch up
    /// once it is again.
    func testANodeWhoseHeartbeatCannotMakeTheRoundTripSaysItIsNotConnected() async throws {
        let server = try await PostgresServer.shared()
        let store = try await server.makeDatabase()
        let database = ClusterFixture.databaseName(store)
        let a = try await startNode("a", store: store)
        try await waitUntil("node a is connected") { try await ClusterFixture.metric("broker_cluster_connected", of: a) == 1 }
        let catchUps = try await ClusterFixture.metric("broker_cluster_catch_ups_total", of: a) ?? 0

        try await server.psql("ALTER DATABASE \(database) ALLOW_CONNECTIONS false")
        do {
            try await server.psql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)' AND query NOT ILIKE 'listen%'")
            try await waitUntil("node a says it is not connected to the cluster") {
                try await ClusterFixture.metric("broker_cluster_connected", of: a) == 0
            }
        } catch {
            _ = try? await server.psql("ALTER DATABASE \(database) ALLOW_CONNECTIONS true")
            throw error
        }
        try await server.psql("ALTER DATABASE \(database) ALLOW_CONNECTIONS true")
        try await waitUntil("node a is connected again, and caught up") {
            let connected = try await ClusterFixture.metric("broker_cluster_connected", of: a)
            let caughtUp = try await ClusterFixture.metric("broker_cluster_catch_ups_total", of: a) ?? 0
            return connected == 1 && caughtUp > catchUps
        }
    }

    /// A donation whose labels are as long as the broker accepts, in characters of many bytes each, is far past
    /// NOTIFY's 8,000 bytes: it crosses nodes all the same, because the bus carries only its id and revision.
    func testADonationWithTheLongestMultiByteLabelsCrossesNodes() async throws {
        let store = try await PostgresServer.shared().makeDatabase()
        let a = try await startNode("a", store: store)
        let b = try await startNode("b", store: store)
        // One character (grapheme) of 25 bytes: the limit counts characters.
        let family = "\u{1F469}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466}"
        let longest = String(repeating: family, count: DonationUpdate.maximumTextLength)
        XCTAssertEqual(longest.count, DonationUpdate.maximumTextLength)
        XCTAssertEqual(longest.utf8.count, 5_000)
        let home = Home(lat: LiveBroker.home.lat, lon: LiveBroker.home.lon, label: longest)
        let institution = Institution(lat: LiveBroker.institution.lat, lon: LiveBroker.institution.lon, name: longest)
        let tooLong = DonationUpdate(
            donor: donorID, volunteer: volunteerID, state: .beingLookedFor, home: Home(lat: 0, lon: 0, label: longest + family), institution: institution)
        guard case .failure = tooLong.validated() else { return XCTFail("one character more is accepted: this is not the longest") }

        try await ClusterFixture.put("d-big", on: a, donor: donorID, volunteer: volunteerID, state: .beingLookedFor, home: home, institution: institution)
        let donor = try await ClusterFixture.connect(donorID, to: b)
        let subscribed = try await ClusterFixture.subscribe(donor, to: "d-big")
        XCTAssertEqual(subscribed.state, .beingLookedFor)
        try await ClusterFixture.put("d-big", on: a, donor: donorID, volunteer: volunteerID, state: .pickedByVolunteer, home: home, institution: institution)
        var frame = try await donor.next()
        while case .presence = frame { frame = try await donor.next() }
        guard case .state(let paused) = frame else { return XCTFail("expected a state frame, got \(frame)") }
        XCTAssertEqual(paused.state, .pickedByVolunteer)
    }

    /// The bus's writer sends on a session of its own: when that session is cut, the positions published next still
    /// cross to the other node, each once and in order, over a new session.
    func testPositionsCrossNodesAgainAfterTheWritersSessionIsCut() async throws {
        let server = try await PostgresServer.shared()
        let store = try await server.makeDatabase()
        let database = ClusterFixture.databaseName(store)
        let a = try await startNode("a", store: store)
        let b = try await startNode("b", store: store)
        let (volunteer, donor) = try await positionsCrossing(from: a, to: b)

        let cut = try await server.psql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)' AND query ILIKE '%lb_keep_positions%' AND pid <> pg_backend_pid()")
        XCTAssertEqual(cut.split(separator: "\n").filter { $0 == "t" }.count, 1, "node a's writer session was cut")
        let second = try await volunteer.publishKept(position(metresFromHome: 800))
        let third = try await volunteer.publishKept(position(metresFromHome: 700))
        let afterCut = try await ClusterFixture.nextPosition(donor)
        let next = try await ClusterFixture.nextPosition(donor)
        XCTAssertEqual([afterCut.position, next.position], [second, third])
    }

    /// The path to PostgreSQL goes silent under node a (no FIN, no RST: a firewall or a NAT that forgot the
    /// sessions) while new connections still get through: the writer's statement is never answered, and past its
    /// deadline the writer must give the session up and send on a new one, or positions stop crossing for good.
    func testPositionsCrossNodesAgainAfterTheWritersPathGoesSilent() async throws {
        let server = try await PostgresServer.shared()
        let store = try await server.makeDatabase()
        let proxy = try await FaultProxy.start(target: server.port)
        addTeardownBlock { await proxy.stop() }
        let throughProxy = store.replacingOccurrences(of: "127.0.0.1:\(server.port)/", with: "127.0.0.1:\(proxy.port)/")
        let a = try await startNode("a", store: throughProxy)
        let b = try await startNode("b", store: store)
        let (volunteer, donor) = try await positionsCrossing(from: a, to: b)

        proxy.silence()
        let second = try await volunteer.publishKept(position(metresFromHome: 800))
        let afterSilence = try await ClusterFixture.nextPosition(donor, within: .seconds(30))
        XCTAssertEqual(afterSilence.position, second)
    }

    /// The volunteer on node `a` and the donor of their donation on node `b`, once a first position has crossed.
    private func positionsCrossing(from a: BrokerProcess, to b: BrokerProcess) async throws -> (volunteer: BrokerConnection, donor: BrokerConnection) {
        try await ClusterFixture.put("d-1", on: a, donor: donorID, volunteer: volunteerID, state: .beingLookedFor)
        let donor = try await ClusterFixture.connect(donorID, to: b)
        _ = try await ClusterFixture.subscribe(donor, to: "d-1")
        let volunteer = try await ClusterFixture.connect(volunteerID, to: a)
        let first = try await volunteer.publishKept(position(metresFromHome: 900))
        let crossed = try await ClusterFixture.nextPosition(donor)
        XCTAssertEqual(crossed.position, first)
        return (volunteer, donor)
    }
}
