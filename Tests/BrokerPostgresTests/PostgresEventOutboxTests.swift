import BrokerStorage
import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import XCTest

@testable import BrokerPostgres
@testable import BrokerTestSupport

/// The event outbox in PostgreSQL: the shared scenarios, events written in one transaction with the donation change
/// that caused them, and nodes on separate connections claiming at once.
final class PostgresEventOutboxTests: XCTestCase {
    private static let logger: Logger = {
        var logger = Logger(label: "outbox-test")
        logger.logLevel = .warning
        return logger
    }()

    /// Runs `body` with `count` clients (as many nodes) on a new, migrated database, and stops them whatever happens.
    private func withNodes<T: Sendable>(
        _ count: Int, _ body: ([PostgresClient]) async throws -> T
    ) async throws -> T {
        let server = try await PostgresServer.shared()
        let location = try PostgresLocation(try await server.makeDatabase())
        _ = try await PostgresSchema.prepare(location, keys: Self.keys, logger: Self.logger)
        let clients = (0..<count).map { _ in PostgresClient(configuration: location.clientConfiguration(), backgroundLogger: Self.logger) }
        let runs = clients.map { client in Task { await client.run() } }
        let result: Result<T, any Error>
        do { result = .success(try await body(clients)) } catch { result = .failure(error) }
        for run in runs {
            run.cancel()
            await run.value
        }
        return try result.get()
    }

    private static let keys = ClusterKeys(secrets: ["outbox-test-secret-0123456789-0123456789"])

    func testTheSharedScenarios() async throws {
        // One database per scenario: each starts from an empty outbox.
        for scenario in EventOutboxScenarios.all {
            do {
                try await withNodes(1) { clients in
                    try await scenario.run(EventOutboxScenarios(outbox: PostgresEventOutbox(client: clients[0])))
                }
            } catch {
                XCTFail("\(scenario.name): \(error)")
            }
        }
    }

    func testADonationChangeAndItsEventsAreOneTransaction() async throws {
        try await withNodes(1) { clients in
            let store = PostgresDonationStore(client: clients[0], node: "n1", keys: Self.keys, logger: Self.logger)
            let outbox = PostgresEventOutbox(client: clients[0])
            let donation = EventOutboxScenarios.donation("d-1", state: .created)

            let change = try await store.change(id: "d-1", { _ in .save(donation) }) { change in
                [EventOutboxScenarios.event(1, donation: change.id, at: change.revision)]
            }
            var claimed = try await outbox.claim(.webhook, node: "n1", now: 2_000, lease: 30_000, limit: 10)
            XCTAssertEqual(claimed.map(\.event.id), [EventOutboxScenarios.id(1)])
            XCTAssertEqual(claimed.first?.event.occurredAt, change?.revision, "the closure was given the change with its revision")

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
            claimed = try await outbox.claim(.webhook, node: "n2", now: 40_000, lease: 30_000, limit: 10)
            XCTAssertEqual(claimed.map(\.event.id), [EventOutboxScenarios.id(1)], "no event of a change that was not stored")
        }
    }

    func testTwoNodesClaimingAtOnceSendEveryRowOnceAndEachDonationInOrder() async throws {
        let donations = 20
        let perDonation = 10
        try await withNodes(2) { clients in
            let writer = PostgresEventOutbox(client: clients[0])
            // Appended round-robin, so that every donation's rows are spread over the whole table.
            var events: [OutboxEvent] = []
            for n in 0..<(donations * perDonation) { events.append(EventOutboxScenarios.event(n, donation: "d-\(n % donations)")) }
            try await writer.append(events)

            // Each claim is logged before its rows are marked delivered, and a donation's next row can only be claimed
            // after that: so the log holds each donation's claims in the order they happened.
            let log = ClaimLog()
            let deadline = ContinuousClock.now + .seconds(60)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, client) in clients.enumerated() {
                    for worker in 0..<2 {
                        let node = "node-\(index)"
                        let outbox = PostgresEventOutbox(client: client)
                        group.addTask {
                            var idle = 0
                            while idle < 20 {
                                guard ContinuousClock.now < deadline else { throw WaitTimeout("every row was claimed (\(node)/\(worker))", deadline: deadline) }
                                let now = Int64(Date().timeIntervalSince1970 * 1000)
                                let claimed = try await outbox.claim(.webhook, node: node, now: now, lease: 600_000, limit: 3)
                                log.entries.withLockedValue { entries in entries += claimed.map { (node, $0.event) } }
                                for row in claimed {
                                    try await outbox.delivered(row.event.id, route: .webhook, node: node, at: now)
                                }
                                let pending = try await outbox.stats(route: .webhook, now: now).pending
                                idle = pending == 0 ? idle + 1 : 0
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let claims = log.entries.withLockedValue { $0 }
            let ids = claims.map(\.event.id)
            XCTAssertEqual(ids.count, events.count, "every row claimed once overall")
            XCTAssertEqual(Set(ids), Set(events.map(\.id)))
            XCTAssertEqual(Set(claims.map(\.node)).count, 2, "both nodes took part")
            for d in 0..<donations {
                let expected = events.filter { $0.donation == "d-\(d)" }.map(\.id)
                XCTAssertEqual(claims.filter { $0.event.donation == "d-\(d)" }.map(\.event.id), expected, "d-\(d) in order")
            }
        }
    }

    func testARowLeasedByANodeThatDiedIsTakenByTheOtherNode() async throws {
        try await withNodes(2) { clients in
            let dead = PostgresEventOutbox(client: clients[0])
            let alive = PostgresEventOutbox(client: clients[1])
            try await dead.append([EventOutboxScenarios.event(1, donation: "d-1"), EventOutboxScenarios.event(2, donation: "d-1")])
            let first = try await dead.claim(.webhook, node: "dead", now: 1_000, lease: 5_000, limit: 10)
            XCTAssertEqual(first.map(\.event.id), [EventOutboxScenarios.id(1)])
            // The first node says nothing more: its lease stays in the table until it runs out.
            let early = try await alive.claim(.webhook, node: "alive", now: 5_999, lease: 5_000, limit: 10)
            XCTAssertEqual(early, [], "not while the lease runs")
            let taken = try await alive.claim(.webhook, node: "alive", now: 6_000, lease: 5_000, limit: 10)
            XCTAssertEqual(taken.map(\.event.id), [EventOutboxScenarios.id(1)], "taken once it ran out")
        }
    }

    func testNodesSubscribingAtOnceStayWithinTheLimit() async throws {
        try await withNodes(2) { clients in
            let outboxes = clients.map { PostgresEventOutbox(client: $0) }
            // Connections opened first, so that the adds below run at the same time.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<12 { group.addTask { _ = try await outboxes[n % 2].subscriptions(donation: "warm-up", incarnation: "i") } }
                try await group.waitForAll()
            }
            let added = try await withThrowingTaskGroup(of: Bool.self) { group in
                for n in 0..<12 {
                    group.addTask {
                        let record = PushSubscriptionRecord(
                            donation: "d-1", incarnation: "i", endpoint: "https://push.example/\(n)", p256dh: "k", auth: "a", createdAt: Int64(n))
                        return try await outboxes[n % 2].addSubscription(record, limit: 3)
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            XCTAssertEqual(added, 3)
            let stored = try await outboxes[0].subscriptions(donation: "d-1", incarnation: "i")
            XCTAssertEqual(stored.count, 3)
        }
    }
}

/// The claims of every node, in the order they returned.
private final class ClaimLog: Sendable {
    let entries = NIOLockedValueBox<[(node: String, event: OutboxEvent)]>([])
}
