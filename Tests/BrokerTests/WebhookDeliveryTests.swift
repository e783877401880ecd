import Atomics
import BrokerProtocol
import BrokerStorage
import Foundation
import GRDB
import XCTest

@testable import BrokerCore
@testable import BrokerSQLite
@testable import BrokerTestSupport
@testable import LocationBroker

/// One broker on SQLite and a real webhook receiver in the test process that misbehaves as backends do: down for a
/// while, hanging, redirecting, holding the wrong secret. Every event must still arrive, signed, once it can, in
/// order per donation, and nothing of a position in it.
final class WebhookDeliveryTests: XCTestCase {
    private let secret = TestWebhookSecret.random()

    private func startBroker(
        webhook receiver: EventReceiver, secrets: [TestWebhookSecret]? = nil, timeoutSeconds: Int = 1
    ) async throws -> LiveBroker {
        let secrets = secrets ?? [secret]
        return try await startBroker { configuration in
            configuration.webhookURL = receiver.url + "/hooks"
            configuration.webhookSecrets = secrets.map(\.text)
            configuration.webhookTimeoutSeconds = timeoutSeconds
        }
    }

    /// A donation's whole life, through the backend API: the four state events.
    private func driveThroughItsLife(_ donation: String, on broker: LiveBroker) async throws {
        for state in [DonationState.beingLookedFor, .pickedByVolunteer, .beingTakenTo, .delivered] {
            try await broker.put(donation, state: state)
        }
    }

    private static let lifeEvents = ["tracking.started", "tracking.paused", "tracking.resumed", "tracking.ended"]

    func testAReceiverDownForAWhileGetsEveryEventLaterInOrderWithTheSameIDs() async throws {
        // The first two requests find the backend down (500), then it is back.
        let receiver = try await startReceiver { _, before in .status(before < 2 ? 500 : 200) }
        let broker = try await startBroker(webhook: receiver)
        try await driveThroughItsLife("d-1", on: broker)

        try await receiver.waitFor("the four events are taken after the outage", within: .seconds(60)) { requests in
            requests.dropFirst(2).compactMap(ReceivedEvent.init).count >= 4
        }
        let requests = receiver.received
        let refused = requests.prefix(2).compactMap(ReceivedEvent.init)
        let taken = requests.dropFirst(2).compactMap(ReceivedEvent.init)
        XCTAssertEqual(taken.map(\.type), Self.lifeEvents, "each event once, oldest first")
        XCTAssertEqual(Set(taken.map(\.id)).count, taken.count, "no event taken twice")
        XCTAssertEqual(Set(refused.map(\.id)), [taken[0].id], "the refused attempts were the first event's, held back its successors, and it came again under its id")
        for request in requests { XCTAssertTrue(secret.verifies(request), "signed: \(request.headers)") }
        assertNothingPrivate(in: requests)
    }

    func testAReceiverThatNeverAnswersIsTimedOutAndTriedAgainWhileOtherDonationsGoOn() async throws {
        // The backend hangs on everything about d-slow (accepts, reads, never answers) until told otherwise.
        let hanging = ManagedAtomic(true)
        let receiver = try await startReceiver { request, _ in
            hanging.load(ordering: .relaxed) && request.text.contains(#""d-slow""#) ? .hang : .status(200)
        }
        let broker = try await startBroker(webhook: receiver, timeoutSeconds: 5)
        try await broker.put("d-slow", state: .beingLookedFor)
        try await receiver.waitFor("d-slow's start reaches the hanging receiver") { $0.contains { $0.text.contains(#""d-slow""#) } }

        // d-slow's request is open, for seconds to come: d-fast's events do not wait for it.
        try await broker.put("d-fast", state: .beingLookedFor)
        try await broker.put("d-fast", state: .pickedByVolunteer)
        try await receiver.waitFor("d-fast's events arrive while d-slow's request hangs", within: .seconds(3)) { requests in
            requests.compactMap(ReceivedEvent.init).filter { $0.donation == "d-fast" }.count == 2
        }
        try await receiver.waitFor("d-slow's start is timed out and sent again", within: .seconds(20)) { requests in
            requests.compactMap(ReceivedEvent.init).filter { $0.donation == "d-slow" }.count >= 2
        }
        let attempts = receiver.received.compactMap(ReceivedEvent.init).filter { $0.donation == "d-slow" }
        XCTAssertEqual(Set(attempts.map(\.id)).count, 1, "the same event, under the same webhook-id")

        hanging.store(false, ordering: .relaxed)
        let before = receiver.received.count
        try await receiver.waitFor("d-slow's start is taken once the receiver answers", within: .seconds(40)) { requests in
            requests.dropFirst(before).contains { $0.text.contains(#""d-slow""#) }
        }
        assertNothingPrivate(in: receiver.received)
    }

    func testARedirectIsNotFollowedAndTheEventIsTriedAgainWhereItWasSent() async throws {
        let receiver = try await startReceiver()
        // The first request is sent elsewhere: a webhook URL must not become a way to reach another address.
        receiver.answer { [url = receiver.url] request, before in
            before == 0 ? .redirect(url + "/elsewhere") : .status(200)
        }
        let broker = try await startBroker(webhook: receiver)
        try await broker.put("d-1", state: .beingLookedFor)

        try await receiver.waitFor("the start is sent again after the redirect", within: .seconds(20)) { $0.count >= 2 }
        let requests = receiver.received
        XCTAssertEqual(requests.map { "\($0.method) \($0.path)" }, ["POST /hooks", "POST /hooks"], "nothing sent where the redirect pointed")
        XCTAssertEqual(Set(requests.compactMap(\.webhookID)).count, 1, "the same event both times")
    }

    func testDuringARotationBothSecretsSignAndAWrongSecretVerifiesNothing() async throws {
        let old = TestWebhookSecret.random()
        let new = TestWebhookSecret.random()
        let wrong = TestWebhookSecret.random()
        let receiver = try await startReceiver()
        let broker = try await startBroker(webhook: receiver, secrets: [old, new])
        try await driveThroughItsLife("d-1", on: broker)
        try await receiver.waitFor("the four events arrive") { $0.count >= 4 }

        let now = Int64(Date().timeIntervalSince1970)
        for request in receiver.received {
            XCTAssertEqual(old.signatures(request).count, 2, "one v1 signature per secret: \(request.headers["webhook-signature"] ?? "none")")
            XCTAssertTrue(old.verifies(request), "the old secret verifies")
            XCTAssertTrue(new.verifies(request), "the new secret verifies")
            XCTAssertFalse(wrong.verifies(request), "a receiver with another secret refuses it")
            let timestamp = Int64(request.headers["webhook-timestamp"] ?? "") ?? 0
            XCTAssertLessThan(abs(now - timestamp), 300, "the timestamp is the attempt's, in seconds")
            XCTAssertEqual(request.headers["content-type"], "application/json")
        }
        // A body changed on the way no longer verifies.
        if let request = receiver.received.first {
            let tampered = EventReceiver.Received(
                method: request.method, path: request.path, headers: request.headers, body: Data(request.text.replacingOccurrences(of: "d-1", with: "d-2").utf8),
                at: request.at)
            XCTAssertFalse(old.verifies(tampered))
        }
        assertNothingPrivate(in: receiver.received)
    }

    /// `webhook_retry_hours` is at least an hour, so the event given up here happened a day and an hour ago: it is
    /// put in the broker's outbox as an event still pending after a day of failures would be.
    func testAnEventStillRefusedAfterTheRetryHoursIsKeptAsFailedAndAnOperatorSendsItAgain() async throws {
        let receiver = try await startReceiver { _, _ in .status(503) }
        let broker = try await startBroker(webhook: receiver)
        let now = WallClock.system.now()
        let stale = Self.event("d-old", type: "tracking.started", at: now - 25 * 3_600_000)
        let fresh = Self.event("d-old", type: "tracking.paused", at: now)
        try await Self.append([stale, fresh], toOutboxOf: broker)

        try await waitUntil("the stale event is given up", deadline: .now + .seconds(20)) {
            try await Self.failed(on: broker).contains { $0["id"] as? String == stale.id }
        }
        let failed = try await Self.failed(on: broker)
        XCTAssertEqual(failed.count, 1)
        XCTAssertEqual(failed.first?["attempts"] as? Int, 1)
        XCTAssertTrue((failed.first?["lastError"] as? String ?? "").contains("503"), "\(failed)")
        try await receiver.waitFor("the later event of the donation is no longer held back") { requests in
            requests.contains { $0.webhookID == fresh.id }
        }

        receiver.answer { _, _ in .status(204) }
        let unknown = try await broker.backend(.post, "/v1/events/retry", body: #"{"route":"webhook","id":"evt_00000000000000000000000000000000"}"#)
        XCTAssertEqual(unknown.status, .notFound)
        let retried = try await broker.backend(.post, "/v1/events/retry", body: #"{"route":"webhook","id":"\#(stale.id)"}"#)
        XCTAssertEqual(retried.status, .ok)
        XCTAssertEqual(String(buffer: retried.body ?? .init()), #"{"requeued":1}"#)
        try await receiver.waitFor("the operator's retry sends the stale event again") { requests in
            requests.filter { $0.webhookID == stale.id }.count >= 2
        }
        try await waitUntil("nothing is failed any more") { try await Self.failed(on: broker).isEmpty }
        let withoutKey = try await broker.backend(.get, "/v1/events/failed", key: "not-the-key")
        XCTAssertEqual(withoutKey.status, .unauthorized, "operators only")
        for request in receiver.received { XCTAssertTrue(secret.verifies(request)) }
    }

    // MARK: - The outbox from outside the broker

    static func event(_ donation: String, type: String, at: Int64) -> OutboxEvent {
        let id = "evt_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let timestamp = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(at) / 1000))
        let body = #"{"data":{"destination":"home","donation":"\#(donation)"},"timestamp":"\#(timestamp)","type":"\#(type)"}"#
        return OutboxEvent(id: id, donation: donation, incarnation: "", type: type, occurredAt: at, body: body)
    }

    /// Appends `events` to the outbox in `broker`'s SQLite file, through a connection of its own.
    static func append(_ events: [OutboxEvent], toOutboxOf broker: LiveBroker) async throws {
        var configuration = GRDB.Configuration()
        configuration.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: broker.database, configuration: configuration)
        try await SQLiteEventOutbox(database: queue).append(events)
        try queue.close()
    }

    static func failed(on broker: LiveBroker) async throws -> [[String: Any]] {
        let response = try await broker.backend(.get, "/v1/events/failed?route=webhook")
        XCTAssertEqual(response.status, .ok)
        return (try JSONSerialization.jsonObject(with: Data(buffer: response.body ?? .init())) as? [[String: Any]]) ?? []
    }
}
