import BrokerClient
import BrokerProtocol
import Foundation
import GRDB
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

#if canImport(Glibc)
import Glibc
#endif

/// The real executable: killed mid-write it loses nothing it acknowledged; asked to stop it drains and exits 0.
final class CrashAndSignalTests: XCTestCase {
    private func temporaryDatabase() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("broker-crash-\(UUID().uuidString)/broker.sqlite").path
    }


    func testKill9LosesNothingThatWasAcknowledged() async throws {
        let database = temporaryDatabase()
        let broker = try await startBrokerProcess(database: database)
        let port = broker.port
        let donations = 24

        let ledger = WriteLedger()
        let writers = Task { await walkDonations(count: donations, port: port, ledger: ledger) }
        // Kill it while the writes are under way.
        try await waitUntil("the writers are under way", poll: .milliseconds(1)) { await ledger.total >= donations * 2 }
        broker.signal(SIGKILL)
        _ = try await writers.value(waitingFor: "the writers gave up on the killed broker")
        let acknowledged = await ledger.acknowledged
        let inFlight = await ledger.inFlight
        XCTAssertGreaterThan(acknowledged.count, 0)

        // The file is whole, and every acknowledged step is there (or the one in flight, which may have landed).
        let queue = try DatabaseQueue(path: database)
        let integrity = try await queue.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") }
        XCTAssertEqual(integrity, "ok")
        try queue.close()
        let restarted = try await startBrokerProcess(database: database)
        for (id, step) in acknowledged {
            let response = try await LiveBroker.backend(port: restarted.port, .get, "/v1/donations/\(id)")
            XCTAssertEqual(response.status, .ok, id)
            let stored = try JSONDecoder().decode(Donation.self, from: Data(buffer: response.body ?? .init()))
            let allowed = Set([step, inFlight[id]].compactMap { $0 }.map { donationWalk[$0].0 })
            XCTAssertTrue(allowed.contains(stored.state), "\(id): stored \(stored.state), acknowledged \(donationWalk[step].0)")
        }
        restarted.signal(SIGTERM)
        _ = await restarted.waitForExit(timeout: .seconds(15))
    }

    func testSIGTERMClosesSocketsWith1001AndExitsZero() async throws {
        let broker = try await startBrokerProcess(database: temporaryDatabase())
        let token = try await LiveBroker.token("donor@example.org")
        let donor = try await BrokerConnection.connect(url: "ws://127.0.0.1:\(broker.port)/v1/ws", token: token)
        guard case .welcome = try await donor.next() else { return XCTFail("no welcome") }
        let started = ContinuousClock.now
        broker.signal(SIGTERM)
        guard case .closed(let code, _) = await donor.nextEvent() else { return XCTFail("not closed") }
        XCTAssertEqual(code, 1001)
        let status = await broker.waitForExit(timeout: .seconds(20))
        XCTAssertEqual(status, 0)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(20), "the shutdown grace bounds the exit")
    }
}

/// What the writers know: the last step the broker acknowledged per donation, and the step in flight.
private actor WriteLedger {
    var acknowledged: [String: Int] = [:]
    var inFlight: [String: Int] = [:]
    var total = 0

    func sending(_ id: String, _ step: Int) { inFlight[id] = step }

    func acknowledged(_ id: String, _ step: Int) {
        acknowledged[id] = step
        inFlight[id] = nil
        total += 1
    }
}

/// Ponte's happy path, one step per backend call.
private let donationWalk: [(DonationState, String?)] = [
    (.created, nil), (.created, "vol@example.org"), (.beingLookedFor, "vol@example.org"),
    (.pickedByVolunteer, "vol@example.org"), (.beingTakenTo, "vol@example.org"), (.delivered, "vol@example.org"),
]

    /// Walks `count` donations through Ponte's happy path in parallel, recording what the broker acknowledged.
private func walkDonations(count: Int, port: Int, ledger: WriteLedger) async {
    await withTaskGroup(of: Void.self) { group in
        for index in 0..<count {
            group.addTask {
                let id = "crash-\(index)"
                for (step, (state, volunteer)) in donationWalk.enumerated() {
                    await ledger.sending(id, step)
                    let body = LiveBroker.donationJSON(donor: "donor\(index)@example.org", volunteer: volunteer, state: state)
                    guard let response = try? await LiveBroker.backend(port: port, .put, "/v1/donations/\(id)", body: body),
                        response.status == .ok
                    else { return }
                    await ledger.acknowledged(id, step)
                }
            }
        }
    }
}

