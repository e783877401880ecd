import BrokerClient
import BrokerProtocol
import Foundation
import XCTest

@testable import BrokerPostgres
@testable import BrokerTestSupport
@testable import LocationBroker

/// `lb_last_positions`, the one place a position is written to PostgreSQL: sealed, never kept after tracking
/// ended, and swept when old.
final class ClusterLastPositionTests: XCTestCase {
    private let volunteerID = "vol.stored@example.org"
    private let donorID = "donor.stored@example.org"

    private func rows(_ server: PostgresServer, _ database: String) async throws -> Int {
        Int(try await server.psql("SELECT count(*) FROM lb_last_positions", database: database).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    func testAStoredLastPositionHoldsNoIdentityNorCoordinateAndIsSweptWhenOld() async throws {
        let server = try await PostgresServer.shared()
        let store = try await server.makeDatabase()
        let database = ClusterFixture.databaseName(store)
        let a = try await startNode("a", store: store)
        try await ClusterFixture.put("d-stored-1", on: a, donor: donorID, volunteer: volunteerID, state: .beingLookedFor)
        let volunteer = try await ClusterFixture.connect(volunteerID, to: a)
        let fix = position(metresFromHome: 700)
        let kept = try await volunteer.publishKept(fix)
        try await waitUntil("the position is stored") { try await rows(server, database) == 1 }

        let row = try await server.psql("SELECT row_to_json(p)::text FROM lb_last_positions p", database: database)
        for secret in [volunteerID, "vol.stored", donorID, "d-stored-1", String(format: "%.4f", abs(fix.lat)), String(format: "%.4f", abs(fix.lon))] {
            XCTAssertFalse(row.contains(secret), "the stored row holds '\(secret)': \(row)")
        }
        // A node started later opens it: `last` on a node that never saw the position.
        let c = try await startNode("c", store: store)
        let donor = try await ClusterFixture.connect(donorID, to: c)
        let subscribed = try await ClusterFixture.subscribe(donor, to: "d-stored-1")
        XCTAssertEqual(subscribed.last?.position, kept)

        try await server.psql("UPDATE lb_last_positions SET kept_at = now() - interval '1 hour'", database: database)
        try await waitUntil("the old row is swept") { try await rows(server, database) == 0 }
    }

    /// A change that ends tracking commits while a node's writer is storing a position kept just before it (the
    /// node has not heard of the change yet): no row may be left behind. The change is made as the store makes
    /// it (change lock, donation row, delete of the stored position), held open for a moment.
    func testAPositionStoredAsTrackingEndsLeavesNoRowBehind() async throws {
        let server = try await PostgresServer.shared()
        let store = try await server.makeDatabase()
        let database = ClusterFixture.databaseName(store)
        let a = try await startNode("a", store: store)
        try await ClusterFixture.put("d-race", on: a, donor: donorID, volunteer: volunteerID, state: .beingLookedFor)
        let volunteer = try await ClusterFixture.connect(volunteerID, to: a)
        _ = try await volunteer.publishKept(position(metresFromHome: 900))
        try await waitUntil("the first position is stored") { try await rows(server, database) == 1 }

        let ending = Task.detached {
            try await server.psql(
                """
                BEGIN;
                SELECT pg_advisory_xact_lock(\(PostgresDonationStore.changeLockKey));
                UPDATE lb_donations SET body = jsonb_set(body::jsonb, '{state}', '"DELIVERED"')::text, active = false,
                    revision = nextval('lb_revision') WHERE id = 'd-race';
                DELETE FROM lb_last_positions;
                SELECT pg_sleep(2);
                COMMIT;
                """, database: database)
        }
        do {
            try await waitUntil("the ending change holds the lock") {
                try await server.psql(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ExclusiveLock' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = '\(database)')"
                ).trimmingCharacters(in: .whitespacesAndNewlines) == "1"
            }
            let sent = try await ClusterFixture.metric("broker_cluster_events_out_total", of: a) ?? 0
            _ = try await volunteer.publishKept(position(metresFromHome: 800))
            try await waitUntil("node a's writer sent the position") {
                (try await ClusterFixture.metric("broker_cluster_events_out_total", of: a) ?? 0) > sent
            }
        } catch {
            _ = try? await ending.value
            throw error
        }
        _ = try await ending.value
        let remaining = try await rows(server, database)
        XCTAssertEqual(remaining, 0, "a position outlived the end of tracking in lb_last_positions")
    }
}
