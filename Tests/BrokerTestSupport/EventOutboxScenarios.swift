import BrokerProtocol
import Foundation
import XCTest

@testable import BrokerStorage

/// The rules every event outbox keeps, SQLite's and PostgreSQL's alike: each scenario gets a fresh, empty outbox
/// and says what it checks. ``SQLiteEventOutboxTests`` and ``PostgresEventOutboxTests`` run them all.
struct EventOutboxScenarios {
    let outbox: any EventOutbox

    static let all: [(name: String, run: @Sendable (EventOutboxScenarios) async throws -> Void)] = [
        ("an id appended twice is stored once", { try await $0.anIDAppendedTwiceIsStoredOnce() }),
        ("each donation gives its oldest pending row, in order", { try await $0.eachDonationGivesItsOldestPendingRowInOrder() }),
        ("a lease keeps other nodes off until it runs out", { try await $0.aLeaseKeepsOtherNodesOffUntilItRunsOut() }),
        ("a retry is not claimed before it is due", { try await $0.aRetryIsNotClaimedBeforeItIsDue() }),
        ("a failed row lets the next go and waits for an operator", { try await $0.aFailedRowLetsTheNextGoAndWaitsForAnOperator() }),
        ("stats count the route's rows", { try await $0.statsCountTheRoutesRows() }),
        ("prune forgets only what every route delivered", { try await $0.pruneForgetsOnlyWhatEveryRouteDelivered() }),
        ("the routes are independent", { try await $0.theRoutesAreIndependent() }),
        ("a delivered id appended again is not sent again", { try await $0.aDeliveredIDAppendedAgainIsNotSentAgain() }),
        ("a huge error text is kept short", { try await $0.aHugeErrorTextIsKeptShort() }),
        ("subscriptions upsert, limit and go", { try await $0.subscriptionsUpsertLimitAndGo() }),
        ("silences and their ends are stored in turn", { try await $0.silencesAndTheirEndsAreStoredInTurn() }),
        ("an event without a webhook waits for none", { try await $0.anEventWithoutAWebhookWaitsForNone() }),
    ]

    /// Runs every scenario on a fresh outbox from `make`, naming the one that failed.
    static func runAll(_ make: () async throws -> any EventOutbox, file: StaticString = #filePath, line: UInt = #line) async throws {
        for scenario in all {
            do {
                try await scenario.run(EventOutboxScenarios(outbox: try await make()))
            } catch {
                XCTFail("\(scenario.name): \(error)", file: file, line: line)
            }
        }
    }

    // MARK: - Events

    static func id(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return "evt_" + String(repeating: "0", count: 32 - hex.count) + hex
    }

    static func event(_ n: Int, donation: String, at occurredAt: Int64 = 1_000, push: Bool = false) -> OutboxEvent {
        OutboxEvent(
            id: id(n), donation: donation, incarnation: "inc-\(donation)", type: "tracking.started", occurredAt: occurredAt,
            body: #"{"type":"tracking.started","timestamp":"2026-11-27T16:20:00.000Z","data":{"donation":"\#(donation)"}}"#,
            push: push ? PushMessage(title: "On the way", body: "Your donation is on its way", tag: donation, urgency: "normal", ttlSeconds: 600) : nil)
    }

    /// A donation for a store's change, as both stores' tests make one.
    static func donation(_ id: String, state: DonationState) -> Donation {
        Donation(
            id: id, donor: "donor@example.org", volunteer: nil, state: state, home: Home(lat: 41.15, lon: -8.61), institution: nil,
            createdAt: 1, updatedAt: 1, incarnation: "inc-\(id)")
    }

    private func claimIDs(_ route: OutboxRoute = .webhook, node: String = "n1", now: Int64 = 2_000, lease: Int64 = 30_000, limit: Int = 100) async throws -> [String] {
        try await outbox.claim(route, node: node, now: now, lease: lease, limit: limit).map(\.event.id)
    }

    private func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw ScenarioFailure(message()) }
    }

    // MARK: - Scenarios

    /// Two nodes judging the same silence each append one, under their own ids: the backend hears of it once, and of
    /// its end once; a `back` with no silence before it is no news.
    func silencesAndTheirEndsAreStoredInTurn() async throws {
        func edge(_ n: Int, _ type: String, incarnation: String = "inc-d-1") -> OutboxEvent {
            OutboxEvent(
                id: Self.id(n), donation: "d-1", incarnation: incarnation, type: type, occurredAt: 1_000 + Int64(n),
                body: #"{"type":"\#(type)"}"#)
        }
        try await outbox.append([edge(1, "tracking.back")])
        try await outbox.append([edge(2, "tracking.silent")])
        try await outbox.append([edge(3, "tracking.silent")])
        try await outbox.append([edge(4, "tracking.back"), edge(5, "tracking.back")])
        try await outbox.append([edge(6, "tracking.silent")])
        try await outbox.append([edge(7, "tracking.back", incarnation: "another")])
        var stored: [String] = []
        while true {
            let ids = try await claimIDs(limit: 1)
            guard let id = ids.first else { break }
            stored.append(id)
            try await outbox.delivered(id, route: .webhook, node: "n1", at: 2_000)
        }
        try expect(
            stored == [Self.id(2), Self.id(4), Self.id(6)],
            "silent, back, silent in turn; a back first, a second silent, a second back and another incarnation's back are dropped: \(stored)")
    }

    func anEventWithoutAWebhookWaitsForNone() async throws {
        var quiet = Self.event(1, donation: "d-1", push: true)
        quiet.webhook = false
        try await outbox.append([quiet])
        try expect(try await claimIDs(.webhook).isEmpty, "no webhook is claimed for an event that has none")
        try expect(try await claimIDs(.push) == [Self.id(1)], "its push is")
        let stats = try await outbox.stats(route: .webhook, now: 2_000)
        try expect(stats.pending == 0, "it waits as no webhook: \(stats)")
    }

    func anIDAppendedTwiceIsStoredOnce() async throws {
        let first = Self.event(1, donation: "d-1")
        var second = first
        second.body = #"{"changed":true}"#
        try await outbox.append([first])
        try await outbox.append([second, first])
        let claimed = try await outbox.claim(.webhook, node: "n1", now: 2_000, lease: 30_000, limit: 10)
        try expect(claimed == [ClaimedEvent(event: first, attempts: 0)], "the first row as it was appended, once: \(claimed)")
        try await outbox.delivered(first.id, route: .webhook, node: "n1", at: 2_100)
        try expect(try await claimIDs(now: 3_000).isEmpty, "no second row")
    }

    func eachDonationGivesItsOldestPendingRowInOrder() async throws {
        // Appended interleaved: a1 b1 a2 c1 a3 b2
        try await outbox.append([Self.event(1, donation: "a"), Self.event(2, donation: "b"), Self.event(3, donation: "a")])
        try await outbox.append([Self.event(4, donation: "c"), Self.event(5, donation: "a"), Self.event(6, donation: "b")])
        try expect(try await claimIDs() == [Self.id(1), Self.id(2), Self.id(4)], "the head of each donation, oldest first")
        try expect(try await claimIDs(node: "n2").isEmpty, "the later rows wait for their heads, which are leased")
        try expect(try await claimIDs(limit: 1).isEmpty, "the same node does not take its leased rows again")

        var sent: [String: [String]] = [:]
        var now: Int64 = 3_000
        for id in [Self.id(1), Self.id(2), Self.id(4)] { try await outbox.delivered(id, route: .webhook, node: "n1", at: now) }
        for _ in 0..<10 {
            now += 1
            let claimed = try await outbox.claim(.webhook, node: "n1", now: now, lease: 30_000, limit: 100)
            if claimed.isEmpty { break }
            try expect(Set(claimed.map(\.event.donation)).count == claimed.count, "one row per donation in a claim: \(claimed.map(\.event.id))")
            for row in claimed {
                sent[row.event.donation, default: []].append(row.event.id)
                try await outbox.delivered(row.event.id, route: .webhook, node: "n1", at: now)
            }
        }
        try expect(sent == ["a": [Self.id(3), Self.id(5)], "b": [Self.id(6)]], "the rest in order: \(sent)")
    }

    func aLeaseKeepsOtherNodesOffUntilItRunsOut() async throws {
        try await outbox.append([Self.event(1, donation: "d-1"), Self.event(2, donation: "d-1")])
        try expect(try await claimIDs(node: "dead", now: 10_000, lease: 5_000) == [Self.id(1)], "the node that will die leases the row")
        try expect(try await claimIDs(node: "alive", now: 14_999).isEmpty, "not while the lease runs")
        let taken = try await outbox.claim(.webhook, node: "alive", now: 15_000, lease: 5_000, limit: 10)
        try expect(taken.map(\.event.id) == [Self.id(1)], "taken over once the lease ran out: \(taken)")
        // The dead node comes back with an outcome for a row it no longer holds: its retry changes nothing.
        try await outbox.retry(Self.id(1), route: .webhook, node: "dead", attempts: 1, nextAttemptAt: 99_000, error: "late")
        try expect(try await claimIDs(node: "third", now: 16_000).isEmpty, "the new lease still holds")
        try await outbox.failed(Self.id(1), route: .webhook, node: "dead", attempts: 9, error: "late")
        try expect(try await outbox.failedEvents(route: .webhook, limit: 10).isEmpty, "a stale node cannot give up on a row it lost")
        // But a row it did send counts as sent, whoever holds it now.
        try await outbox.delivered(Self.id(1), route: .webhook, node: "dead", at: 16_500)
        try expect(try await claimIDs(node: "third", now: 17_000) == [Self.id(2)], "the next row goes")
    }

    func aRetryIsNotClaimedBeforeItIsDue() async throws {
        try await outbox.append([Self.event(1, donation: "d-1"), Self.event(2, donation: "d-1"), Self.event(3, donation: "d-2")])
        try expect(try await claimIDs(now: 1_000) == [Self.id(1), Self.id(3)], "both heads")
        try await outbox.retry(Self.id(1), route: .webhook, node: "n1", attempts: 1, nextAttemptAt: 5_000, error: "HTTP 503")
        try await outbox.delivered(Self.id(3), route: .webhook, node: "n1", at: 1_100)
        try expect(try await claimIDs(node: "n2", now: 4_999).isEmpty, "neither the retry nor the row behind it before it is due")
        let due = try await outbox.claim(.webhook, node: "n2", now: 5_000, lease: 30_000, limit: 10)
        try expect(due.map(\.event.id) == [Self.id(1)] && due.first?.attempts == 1, "due at 5000, with its attempts: \(due)")
    }

    func aFailedRowLetsTheNextGoAndWaitsForAnOperator() async throws {
        try await outbox.append([Self.event(1, donation: "d-1", at: 100), Self.event(2, donation: "d-1", at: 200)])
        _ = try await claimIDs()
        try await outbox.failed(Self.id(1), route: .webhook, node: "n1", attempts: 7, error: "HTTP 410 Gone")
        try expect(try await claimIDs(now: 3_000) == [Self.id(2)], "the failed row no longer holds back the next")
        try await outbox.delivered(Self.id(2), route: .webhook, node: "n1", at: 3_100)
        let failed = try await outbox.failedEvents(route: .webhook, limit: 10)
        try expect(
            failed == [FailedEvent(id: Self.id(1), donation: "d-1", type: "tracking.started", occurredAt: 100, attempts: 7, lastError: "HTTP 410 Gone")],
            "the operator sees it: \(failed)")
        try expect(try await outbox.failedEvents(route: .push, limit: 10).isEmpty, "on its route only")
        try expect(try await outbox.requeue(route: .webhook, id: Self.id(2), now: 4_000) == 0, "a delivered row is not queued again")
        try expect(try await outbox.requeue(route: .webhook, id: Self.id(1), now: 4_000) == 1, "queued again by id")
        try expect(try await outbox.failedEvents(route: .webhook, limit: 10).isEmpty, "no longer failed")
        let again = try await outbox.claim(.webhook, node: "n1", now: 4_000, lease: 30_000, limit: 10)
        try expect(again.map(\.event.id) == [Self.id(1)] && again.first?.attempts == 0, "sent again from its first attempt: \(again)")
        try await outbox.failed(Self.id(1), route: .webhook, node: "n1", attempts: 1, error: "still gone")
        try expect(try await outbox.requeue(route: .webhook, id: nil, now: 5_000) == 1, "all failed rows")
    }

    func statsCountTheRoutesRows() async throws {
        try expect(try await outbox.stats(route: .webhook, now: 10_000) == OutboxStats(pending: 0, retrying: 0, failed: 0, oldestPendingAge: 0), "empty")
        try await outbox.append([
            Self.event(1, donation: "a", at: 4_000), Self.event(2, donation: "b", at: 6_000), Self.event(3, donation: "c", at: 7_000),
            Self.event(4, donation: "c", at: 8_000),
        ])
        _ = try await claimIDs(now: 9_000)
        try await outbox.delivered(Self.id(1), route: .webhook, node: "n1", at: 9_000)
        try await outbox.retry(Self.id(2), route: .webhook, node: "n1", attempts: 2, nextAttemptAt: 20_000, error: "timeout")
        try await outbox.failed(Self.id(3), route: .webhook, node: "n1", attempts: 5, error: "HTTP 500")
        let stats = try await outbox.stats(route: .webhook, now: 10_000)
        try expect(stats == OutboxStats(pending: 2, retrying: 1, failed: 1, oldestPendingAge: 4_000), "\(stats)")
        try expect(try await outbox.stats(route: .push, now: 10_000) == OutboxStats(pending: 0, retrying: 0, failed: 0, oldestPendingAge: 0), "no push")
    }

    func pruneForgetsOnlyWhatEveryRouteDelivered() async throws {
        try await outbox.append([
            Self.event(1, donation: "a", at: 100), Self.event(2, donation: "b", at: 100, push: true), Self.event(3, donation: "c", at: 100),
            Self.event(4, donation: "d", at: 100), Self.event(5, donation: "e", at: 100),
        ])
        _ = try await claimIDs(now: 1_000)
        try await outbox.delivered(Self.id(1), route: .webhook, node: "n1", at: 1_000)
        try await outbox.delivered(Self.id(2), route: .webhook, node: "n1", at: 1_000)
        try await outbox.failed(Self.id(3), route: .webhook, node: "n1", attempts: 3, error: "gone")
        try await outbox.delivered(Self.id(4), route: .webhook, node: "n1", at: 5_000)
        try expect(try await outbox.prune(deliveredBefore: 2_000) == 1, "only the row delivered on every route before 2000")
        let pending = try await outbox.stats(route: .push, now: 2_000).pending
        try expect(pending == 1, "the row still to push stays")
        try expect(try await outbox.failedEvents(route: .webhook, limit: 10).count == 1, "failed rows stay for the operator")
        try expect(try await outbox.prune(deliveredBefore: 6_000) == 1, "the later one, once old enough")
        try expect(try await outbox.stats(route: .webhook, now: 6_000).pending == 1, "the pending row stays")
    }

    func theRoutesAreIndependent() async throws {
        try await outbox.append([Self.event(1, donation: "d-1"), Self.event(2, donation: "d-1", push: true)])
        try expect(try await claimIDs(.push) == [Self.id(2)], "a row without a push is not in the push route, and does not hold back")
        let webhook = try await claimIDs(.webhook)
        try expect(webhook == [Self.id(1)], "the webhook route has its own head: \(webhook)")
        try await outbox.delivered(Self.id(1), route: .webhook, node: "n1", at: 2_000)
        let second = try await outbox.claim(.webhook, node: "n1", now: 2_001, lease: 30_000, limit: 10)
        try expect(second.map(\.event) == [Self.event(2, donation: "d-1", push: true)], "the push message comes back as stored: \(second)")
        try await outbox.delivered(Self.id(2), route: .webhook, node: "n1", at: 2_002)
        try expect(try await outbox.stats(route: .push, now: 3_000).pending == 1, "still to push")
        try await outbox.delivered(Self.id(2), route: .push, node: "n1", at: 3_000)
        try expect(try await outbox.prune(deliveredBefore: 4_000) == 2, "both done")
    }

    func aDeliveredIDAppendedAgainIsNotSentAgain() async throws {
        // The same event detected again, by another node or after a restart.
        try await outbox.append([Self.event(1, donation: "d-1")])
        _ = try await claimIDs()
        try await outbox.delivered(Self.id(1), route: .webhook, node: "n1", at: 2_000)
        try await outbox.append([Self.event(1, donation: "d-1")])
        try expect(try await claimIDs(now: 3_000).isEmpty, "not claimed again")
        try await outbox.delivered(Self.id(1), route: .webhook, node: "n2", at: 9_000)
        try expect(try await outbox.prune(deliveredBefore: 2_001) == 1, "its delivery time is the first one")
    }

    func aHugeErrorTextIsKeptShort() async throws {
        try await outbox.append([Self.event(1, donation: "d-1")])
        _ = try await claimIDs()
        let huge = "HTTP 500: " + String(repeating: "é\n\u{0}<html>", count: 200_000)
        try await outbox.failed(Self.id(1), route: .webhook, node: "n1", attempts: 1, error: huge)
        let kept = try await outbox.failedEvents(route: .webhook, limit: 1).first?.lastError ?? ""
        try expect(kept.utf8.count <= OutboxErrorText.maxBytes, "cut to \(OutboxErrorText.maxBytes) bytes, not \(kept.utf8.count)")
        try expect(kept.hasPrefix("HTTP 500: é  <html>") && kept.hasSuffix("…"), "its start, on one line, marked as cut: \(kept)")
        try expect(!kept.unicodeScalars.contains { $0.properties.generalCategory == .control }, "no control characters")
    }

    func subscriptionsUpsertLimitAndGo() async throws {
        func record(_ endpoint: String, donation: String = "d-1", incarnation: String = "i-1", key: String = "k", at: Int64 = 1) -> PushSubscriptionRecord {
            PushSubscriptionRecord(
                donation: donation, incarnation: incarnation, endpoint: "https://push.example/\(endpoint)", p256dh: key, auth: "a", createdAt: at)
        }
        try expect(try await outbox.addSubscription(record("1", at: 1), limit: 2), "first")
        try expect(try await outbox.addSubscription(record("2", at: 2), limit: 2), "second")
        try expect(!(try await outbox.addSubscription(record("3", at: 3), limit: 2)), "a third is refused")
        try expect(try await outbox.addSubscription(record("2", key: "new", at: 4), limit: 2), "the same endpoint again replaces its row")
        var stored = try await outbox.subscriptions(donation: "d-1", incarnation: "i-1")
        try expect(stored == [record("1", at: 1), record("2", key: "new", at: 4)], "\(stored)")
        try expect(try await outbox.subscriptions(donation: "d-1", incarnation: "i-0").isEmpty, "another incarnation has none")
        // One browser watching two donations keeps both.
        try expect(try await outbox.addSubscription(record("1", donation: "d-2", incarnation: "j"), limit: 2), "another donation")
        try await outbox.removeSubscription(endpoint: "https://push.example/1")
        stored = try await outbox.subscriptions(donation: "d-1", incarnation: "i-1")
        try expect(stored == [record("2", key: "new", at: 4)], "the endpoint goes: \(stored)")
        try expect(try await outbox.subscriptions(donation: "d-2", incarnation: "j").isEmpty, "from every donation")
        // A donor turning one donation's pushes off keeps the same browser's pushes of another.
        try expect(try await outbox.addSubscription(record("7"), limit: 5), "d-1's")
        try expect(try await outbox.addSubscription(record("7", donation: "d-2", incarnation: "j"), limit: 5), "d-2's")
        try await outbox.removeSubscription(endpoint: "https://push.example/7", donation: "d-2")
        try expect(try await outbox.subscriptions(donation: "d-2", incarnation: "j").isEmpty, "d-2's goes")
        try expect(try await outbox.subscriptions(donation: "d-1", incarnation: "i-1").contains(record("7")), "d-1's stays")
        // The donation made again under the same id: the old incarnation's subscriptions neither count nor stay.
        try expect(try await outbox.addSubscription(record("5", incarnation: "i-2"), limit: 1), "a new incarnation is not held back by the old")
        try expect(try await outbox.subscriptions(donation: "d-1", incarnation: "i-1").isEmpty, "the old incarnation's are gone")
        try expect(try await outbox.addSubscription(record("6", donation: "d-3", incarnation: "x"), limit: 1), "another donation")
        try await outbox.removeSubscriptions(donation: "d-1")
        try expect(try await outbox.subscriptions(donation: "d-1", incarnation: "i-2").isEmpty, "all of the donation's go")
        try expect(try await outbox.subscriptions(donation: "d-3", incarnation: "x").count == 1, "only the donation's")
    }
}

struct ScenarioFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
