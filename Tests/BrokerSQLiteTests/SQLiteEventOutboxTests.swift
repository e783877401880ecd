import BrokerStorage
import Foundation
import GRDB
import XCTest

@testable import BrokerSQLite
@testable import BrokerTestSupport

/// The event outbox in the broker's SQLite file: the shared scenarios, events written in one transaction with the
/// donation change that caused them, and rows that outlive the process that wrote them.
final class SQLiteEventOutboxTests: XCTestCase {
    private var folder: URL!

    override func setUp() {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString.prefix(8))")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: folder)
    }

    private func path(_ name: String = "broker.sqlite") -> String { folder.appendingPathComponent(name).path }

    func testTheSharedScenarios() async throws {
        try await EventOutboxScenarios.runAll { SQLiteEventOutbox(database: try SQLiteDatabase.open(path: path("\(UUID().uuidString).sqlite"))) }
    }

    func testAppendedRowsAreInTheFileWhenItIsOpenedAgain() async throws {
        let first = try SQLiteDatabase.open(path: path())
        try await SQLiteEventOutbox(database: first).append([
            EventOutboxScenarios.event(1, donation: "d-1", push: true), EventOutboxScenarios.event(2, donation: "d-2"),
        ])
        // A second queue on the file, as a broker started after a kill -9 opens it: it reads only what is on disk.
        let reopened = SQLiteEventOutbox(database: try SQLiteDatabase.open(path: path()))
        let claimed = try await reopened.claim(.webhook, node: "n1", now: 2_000, lease: 30_000, limit: 10)
        XCTAssertEqual(claimed.map(\.event), [EventOutboxScenarios.event(1, donation: "d-1", push: true), EventOutboxScenarios.event(2, donation: "d-2")])
        let mode = try await first.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        XCTAssertEqual(mode, "wal")
        let synchronous = try await first.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        XCTAssertEqual(synchronous, 2, "FULL: a write is on disk when append returns")
    }

    func testADonationChangeAndItsEventsAreOneTransaction() async throws {
        let database = try SQLiteDatabase.open(path: path())
        let store = SQLiteDonationStore(database: database)
        let outbox = SQLiteEventOutbox(database: database)
        let donation = EventOutboxScenarios.donation("d-1", state: .created)

        let change = try await store.change(id: "d-1", { _ in .save(donation) }) { change in
            [EventOutboxScenarios.event(1, donation: change.id, at: change.revision)]
        }
        XCTAssertEqual(change?.revision, 1)
        var claimed = try await outbox.claim(.webhook, node: "n1", now: 2_000, lease: 30_000, limit: 10)
        XCTAssertEqual(claimed.map(\.event.id), [EventOutboxScenarios.id(1)])
        XCTAssertEqual(claimed.first?.event.occurredAt, 1, "the closure was given the change with its revision")

        struct Refused: Error {}
        var changed = donation
        changed.state = .pickedByVolunteer
        changed.volunteer = "v@example.org"
        do {
            _ = try await store.change(id: "d-1", { [changed] _ in .save(changed) }) { _ in throw Refused() }
            XCTFail("the events closure threw")
        } catch is Refused {}
        do {
            _ = try await store.change(id: "d-1", { _ in throw Refused() }) { _ in [EventOutboxScenarios.event(3, donation: "d-1")] }
            XCTFail("decide threw")
        } catch is Refused {}
        let kept = try await store.donation(id: "d-1")
        XCTAssertEqual(kept?.state, .created, "the change whose events could not be made was not stored")
        let unchanged = try await store.change(id: "d-1", { _ in .keep }) { _ in
            XCTFail("no change, no events")
            return []
        }
        XCTAssertNil(unchanged)
        claimed = try await outbox.claim(.webhook, node: "n2", now: 40_000, lease: 30_000, limit: 10)
        XCTAssertEqual(claimed.map(\.event.id), [EventOutboxScenarios.id(1)], "no event of a change that was not stored")
        let snapshot = try await store.activeDonations()
        XCTAssertEqual(snapshot.revision, 1, "and no revision taken")
    }

    func testADatabaseOfTheReleaseBeforeGainsTheOutbox() async throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let previous = try DatabaseQueue(path: path())
        try SQLiteDonationStore.migrator.migrate(previous, upTo: "v3-incarnations")
        _ = try await SQLiteDonationStore(database: previous).change(id: "d-1", { _ in .save(EventOutboxScenarios.donation("d-1", state: .created)) }, events: { _ in [] })
        try previous.close()

        let database = try SQLiteDatabase.open(path: path())
        let store = SQLiteDonationStore(database: database)
        let kept = try await store.donation(id: "d-1")
        XCTAssertEqual(kept?.state, .created, "the donations stay")
        try await SQLiteEventOutbox(database: database).append([EventOutboxScenarios.event(1, donation: "d-1")])
        let stats = try await SQLiteEventOutbox(database: database).stats(route: .webhook, now: 1_000)
        XCTAssertEqual(stats.pending, 1)
    }
}
