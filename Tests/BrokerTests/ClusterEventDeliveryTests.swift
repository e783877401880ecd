import BrokerClient
import BrokerProtocol
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

@testable import BrokerTestSupport
@testable import LocationBroker

/// Two broker processes on one PostgreSQL, both sending webhooks to the same backend: whichever node decided an
/// event and whichever delivers it, the backend gets each event once, in order per donation, and a node killed in
/// the middle of a delivery loses nothing.
final class ClusterEventDeliveryTests: XCTestCase {
    private let secret = TestWebhookSecret.random()

    private func startEventNode(
        _ name: String, store: String, webhook receiver: EventReceiver, settings: [String: String] = [:]
    ) async throws -> BrokerProcess {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cluster-events-\(UUID().uuidString.prefix(8))")
        var environment = ClusterFixture.environment(name, store: store).merging(settings) { $1 }
        environment["LOCATION_BROKER_WEBHOOK_URL"] = receiver.url + "/hooks"
        environment["LOCATION_BROKER_WEBHOOK_SECRETS"] = secret.text
        environment["LOCATION_BROKER_WEBHOOK_TIMEOUT_SECONDS"] = "1"
        return try await startBrokerProcess(database: folder.appendingPathComponent("unused.sqlite").path, extraEnvironment: environment)
    }

    private static let stateEvents = ["tracking.started", "tracking.paused", "tracking.resumed", "tracking.ended"]

    func testEachEventReachesTheBackendOnceWhicheverNodeDecidedOrSentIt() async throws {
        let server = try await PostgresServer.shared()
        let store = try await server.makeDatabase()
        let receiver = try await startReceiver()
        let a = try await startEventNode("a", store: store, webhook: receiver)
        let b = try await startEventNode("b", store: store, webhook: receiver)
        let nodes = [a, b]

        // d-1: its volunteer publishes through node a while its donor watches through node b.
        try await ClusterFixture.put("d-1", on: a, donor: "donor@example.org", volunteer: "v1@example.org", state: .beingLookedFor)
        let donor = try await ClusterFixture.connect("donor@example.org", to: b)
        _ = try await ClusterFixture.subscribe(donor, to: "d-1")
        let volunteer = try await ClusterFixture.connect("v1@example.org", to: a)
        for metres in [2_000.0, 1_600, 1_200, 800, 400, 10] {
            _ = try await volunteer.publishKept(position(metresFromHome: metres))
            _ = try await ClusterFixture.nextPosition(donor)
        }
        // The other donations are moved through both nodes in turn, each change through the node the last did not use.
        for index in 2...6 {
            try await ClusterFixture.put(
                "d-\(index)", on: nodes[index % 2], donor: "donor\(index)@example.org", volunteer: "v\(index)@example.org", state: .beingLookedFor)
        }
        for (step, state) in [DonationState.pickedByVolunteer, .beingTakenTo, .delivered].enumerated() {
            for index in 1...6 {
                try await ClusterFixture.put(
                    "d-\(index)", on: nodes[(index + step + 1) % 2], donor: index == 1 ? "donor@example.org" : "donor\(index)@example.org",
                    volunteer: "v\(index)@example.org", state: state)
            }
        }
        await volunteer.close()
        await donor.close()

        var expected = ["d-1": ["tracking.started", "tracking.first_position", "tracking.approaching", "tracking.arrived"] + Self.stateEvents.dropFirst()]
        for index in 2...6 { expected["d-\(index)"] = Self.stateEvents }
        let total = expected.values.map(\.count).reduce(0, +)
        try await receiver.waitFor("every event of the six donations arrives", within: .seconds(60)) { $0.count >= total }
        // Time for a second node's duplicate, if there were one, to arrive too.
        try await Task.sleep(for: .seconds(3))

        let requests = receiver.received
        let events = requests.compactMap(ReceivedEvent.init)
        XCTAssertEqual(events.count, requests.count, "every request is an event")
        let ids = events.map(\.id)
        XCTAssertEqual(ids.count, Set(ids).count, "each webhook-id exactly once: \(Dictionary(grouping: ids, by: { $0 }).filter { $0.value.count > 1 }.keys)")
        for (donation, types) in expected.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(events.filter { $0.donation == donation }.map(\.type), types, "\(donation)'s events, once each, in order")
        }
        for request in requests { XCTAssertTrue(secret.verifies(request)) }
        assertNothingPrivate(in: requests)
    }

    func testTheDeliveriesOfANodeKilledMidRequestAreMadeByTheOtherOnceItsLeaseRunsOut() async throws {
        let server = try await PostgresServer.shared()
        let store = try await server.makeDatabase()
        // The backend hangs on the first request: node a holds its lease (timeout 1 s + 10 s) when it is killed.
        let receiver = try await startReceiver { _, before in before == 0 ? .hang : .status(200) }
        let a = try await startEventNode("a", store: store, webhook: receiver)
        try await ClusterFixture.put("d-1", on: a, donor: "donor@example.org", volunteer: "v1@example.org", state: .beingLookedFor)
        try await receiver.waitFor("node a sends the start") { !$0.isEmpty }
        a.signal(SIGKILL)
        let killedAt = ContinuousClock.now
        let exited = await a.waitForExit(timeout: .seconds(10))
        XCTAssertNotNil(exited, "node a is gone")
        let claimedAt = try XCTUnwrap(receiver.received.first).at

        let b = try await startEventNode("b", store: store, webhook: receiver)
        try await ClusterFixture.put("d-1", on: b, donor: "donor@example.org", volunteer: "v1@example.org", state: .pickedByVolunteer)
        try await receiver.waitFor("node b delivers both events", within: .seconds(40)) { $0.count >= 3 }

        let requests = receiver.received
        let events = requests.compactMap(ReceivedEvent.init)
        XCTAssertEqual(events.map(\.type), ["tracking.started", "tracking.started", "tracking.paused"], "the start again, then the pause behind it")
        XCTAssertEqual(events[0].id, events[1].id, "the start again under its webhook-id")
        XCTAssertGreaterThanOrEqual(requests[1].at - claimedAt, .seconds(10), "not before node a's lease ran out (killed \(killedAt - claimedAt) after its request)")
        for request in requests { XCTAssertTrue(secret.verifies(request)) }
        assertNothingPrivate(in: requests)
    }

    /// Every node judges silences (a node that never hears the volunteer judges from the window's opening): the
    /// backend still hears of the silence once, and of its end once.
    func testASilenceJudgedByBothNodesIsToldOnceAndItsEndOnce() async throws {
        let server = try await PostgresServer.shared()
        let store = try await server.makeDatabase()
        let receiver = try await startReceiver()
        let silence = ["LOCATION_BROKER_EVENTS_SILENT_SECONDS": "30"]
        let a = try await startEventNode("a", store: store, webhook: receiver, settings: silence)
        let b = try await startEventNode("b", store: store, webhook: receiver, settings: silence)
        try await ClusterFixture.put("d-1", on: b, donor: "donor@example.org", volunteer: "v1@example.org", state: .beingLookedFor)
        let volunteer = try await ClusterFixture.connect("v1@example.org", to: a)
        // Far enough that no estimate is within the approaching minutes; kept once node a has heard of the donation
        // (the change was made on node b).
        try await waitUntil("node a keeps the volunteer's first fix", poll: .milliseconds(250)) {
            (try? await volunteer.publish(position(metresFromHome: 5_000)))?.tracking == true
        }
        try await receiver.waitFor("the volunteer is told silent", within: .seconds(75)) { requests in
            requests.compactMap(ReceivedEvent.init).contains { $0.type == "tracking.silent" }
        }
        _ = try await volunteer.publishKept(position(metresFromHome: 4_900))
        try await receiver.waitFor("the volunteer is told back") { requests in
            requests.compactMap(ReceivedEvent.init).contains { $0.type == "tracking.back" }
        }
        await volunteer.close()
        try await ClusterFixture.put("d-1", on: a, donor: "donor@example.org", volunteer: "v1@example.org", state: .cancelled)
        try await receiver.waitFor("the end arrives") { requests in
            requests.compactMap(ReceivedEvent.init).contains { $0.type == "tracking.ended" }
        }
        try await Task.sleep(for: .seconds(3))

        let events = receiver.received.compactMap(ReceivedEvent.init)
        XCTAssertEqual(
            events.map(\.type), ["tracking.started", "tracking.first_position", "tracking.silent", "tracking.back", "tracking.ended"],
            "one silence and one end of it, whichever node judged")
        let silentSeconds = events.first { $0.type == "tracking.silent" }?.data["silent_seconds"].flatMap { Int($0) }
        XCTAssertGreaterThanOrEqual(silentSeconds ?? 0, 30)
        assertNothingPrivate(in: receiver.received)
    }
}
