import BrokerClient
import BrokerProtocol
import Foundation
import PostgresNIO
import XCTest

@testable import BrokerCore
@testable import BrokerPostgres
@testable import BrokerTestSupport
@testable import LocationBroker

/// Anyone who can connect to the cluster's PostgreSQL can LISTEN and NOTIFY on the nodes' channel: such a role
/// must learn nothing of a donation or a position, and make no node believe anything.
final class ClusterBusSecrecyTests: XCTestCase {
    private let volunteerID = "volunteer.secret@example.org"
    private let donorID = "donor.secret@example.org"
    private let home = Home(lat: -34.6037, lon: -58.3816, label: "Calle Escondida 742")
    private let institution = Institution(lat: -34.5875, lon: -58.4206, name: "Hogar Reservado")

    func testARoleWithOnlyConnectHearsNoEmailAddressOrCoordinate() async throws {
        let server = try await PostgresServer.shared()
        let store = try await server.makeDatabase()
        let a = try await startNode("a", store: store)
        let b = try await startNode("b", store: store)
        let eve = try await Eavesdropper.start(server: server, store: store, role: "eve_\(UUID().uuidString.prefix(6).lowercased())")
        do {
            try await ClusterFixture.put("donation-secret-7", on: a, donor: donorID, volunteer: volunteerID, state: .beingLookedFor, home: home, institution: institution)
            let donor = try await ClusterFixture.connect(donorID, to: b)
            _ = try await ClusterFixture.subscribe(donor, to: "donation-secret-7")
            let volunteer = try await ClusterFixture.connect(volunteerID, to: a)
            var published: [Position] = []
            for metres in [1_500.0, 1_200, 900] {
                let fix = position(metresFromHome: metres)
                published.append(fix)
                try await volunteer.publishKept(fix)
                let delivered = try await ClusterFixture.nextPosition(donor).position
                XCTAssertEqual(delivered, fix, "the position crossed nodes")
            }
            try await ClusterFixture.put("donation-secret-7", on: b, donor: donorID, volunteer: volunteerID, state: .pickedByVolunteer, home: home, institution: institution)
            await volunteer.close()

            // Three positions, two donation changes and an offline event went over the bus, and heartbeats; the
            // positions and the offline event on the volunteer's shard.
            try await waitUntil("the eavesdropper heard the nodes' events") {
                eve.payloads.count >= 6 && eve.heardOn.filter { $0.channel != PostgresDonationStore.eventChannel }.count >= 4
            }
            let heard = eve.payloads.joined(separator: "\n")
            var secrets = [volunteerID, donorID, "donation-secret-7", home.label ?? "", institution.name ?? "", "Escondida", "Reservado", "BEING", "PICKED"]
            for fix in published {
                // With their decimal point: sealed payloads are base64, which has none.
                secrets += [String(format: "%.4f", abs(fix.lat)), String(format: "%.4f", abs(fix.lon)), "\(fix.lat)".prefix(8).description]
            }
            for secret in secrets where !secret.isEmpty {
                XCTAssertFalse(heard.contains(secret), "the eavesdropper heard '\(secret)'")
            }
            XCTAssertTrue(eve.payloads.allSatisfy { $0.hasPrefix(ClusterKeys.prefix) }, "every payload is sealed")
        } catch {
            await eve.stop()
            throw error
        }
        await eve.stop()
    }

    func testForgedAndReplayedNotificationsChangeNothingAnyClientSees() async throws {
        let server = try await PostgresServer.shared()
        let store = try await server.makeDatabase()
        let a = try await startNode("a", store: store)
        let b = try await startNode("b", store: store)
        let eve = try await Eavesdropper.start(server: server, store: store, role: "eve_\(UUID().uuidString.prefix(6).lowercased())")
        do {
            try await ClusterFixture.put("d-real", on: a, donor: donorID, volunteer: volunteerID, state: .beingLookedFor)
            let donor = try await ClusterFixture.connect(donorID, to: b)
            _ = try await ClusterFixture.subscribe(donor, to: "d-real")
            let volunteer = try await ClusterFixture.connect(volunteerID, to: a)
            let first = try await volunteer.publishKept(position(metresFromHome: 1_000))
            let got = try await ClusterFixture.nextPosition(donor).position
            XCTAssertEqual(got, first)
            try await waitUntil("the eavesdropper heard the position") { eve.heardOn.contains { $0.channel != PostgresDonationStore.eventChannel } }
            let captured = eve.heardOn

            // Forged in the nodes' clear format: a donation that lets the attacker watch the real volunteer, and
            // a position for the real donor.
            let now = WallClock.system.now()
            let forgedDonation = Donation(
                id: "d-forged", donor: "attacker@example.org", volunteer: volunteerID, state: .beingLookedFor,
                home: LiveBroker.home, institution: LiveBroker.institution, createdAt: now, updatedAt: now)
            let donationBody = String(decoding: try WireJSON.encode(forgedDonation), as: UTF8.self)
            try await eve.notify(#"{"k":"d","n":"forger","r":900000000,"id":"d-forged","d":\#(donationBody)}"#)
            // The attacker cannot tell the volunteer's shard (a keyed hash): the forged position goes on every one.
            for channel in Eavesdropper.channels {
                try await eve.notify(#"{"k":"p","n":"forger","c":"\#(volunteerID)","s":\#(now * 1_000 + 1_000_000),"p":{"lat":51.5,"lon":-0.12,"accuracy":5,"timestamp":\#(now)},"t":["d-real"],"ls":\#(now)}"#, on: channel)
            }
            // Sealed-looking, but not sealed with the secret.
            try await eve.notify(ClusterKeys.prefix + Data(repeating: 7, count: 120).base64EncodedString())
            // Everything captured, replayed on the channel it was heard on, and moved to the control channel.
            for (channel, payload) in captured {
                try await eve.notify(payload, on: channel)
                try await eve.notify(payload)
            }

            try await waitUntil("node b dropped the three forgeries") {
                (try await ClusterFixture.metric(#"broker_cluster_sealed_rejected_total{source="bus"}"#, of: b) ?? 0) >= 3
            }
            // The attacker cannot subscribe to the forged donation on either node.
            let attacker = try await ClusterFixture.connect("attacker@example.org", to: b)
            try await attacker.send(.subscribe(.init(id: "x", target: .donation("d-forged"))))
            guard case .error(let refused) = try await attacker.next() else { return XCTFail("the forged donation was believed") }
            XCTAssertEqual(refused.re, "x")
            // The donor's next position is the volunteer's next one: nothing forged or replayed came between.
            let second = try await volunteer.publishKept(position(metresFromHome: 800))
            let next = try await ClusterFixture.nextPosition(donor)
            XCTAssertEqual(next.position, second, "the donor got \(next)")
            try await donor.expectNothingPending()
        } catch {
            await eve.stop()
            throw error
        }
        await eve.stop()
    }

    /// The writer's one statement, `lb_keep_positions`, may be called by any role, as any function may: it runs with
    /// the caller's rights, so a role with a login and no right on the tables stores no position through it, even for
    /// a donation that is trackable.
    func testARoleWithOnlyConnectStoresNoPositionThroughTheWritersFunction() async throws {
        let server = try await PostgresServer.shared()
        let store = try await server.makeDatabase()
        let database = ClusterFixture.databaseName(store)
        let a = try await startNode("a", store: store)
        try await ClusterFixture.put("d-trackable", on: a, donor: donorID, volunteer: volunteerID, state: .beingLookedFor)
        let eve = try await Eavesdropper.start(server: server, store: store, role: "eve_\(UUID().uuidString.prefix(6).lowercased())")
        do {
            let forged: PostgresQuery = """
                SELECT lb_keep_positions(\(PostgresDonationStore.changeLockKey), ARRAY['forged-key'], ARRAY[1]::int8[], ARRAY['forged'],
                    ARRAY['d-trackable'], ARRAY[\(volunteerID)], ARRAY[]::text[], ARRAY[]::text[])
                """
            do {
                try await eve.run(forged)
                XCTFail("a role without rights on the tables called the writer's function and was not refused")
            } catch let error as PSQLError {
                XCTAssertEqual(error.serverInfo?[.sqlState], "42501", "refused for want of rights, not another reason: \(String(reflecting: error))")
            }
            let stored = try await server.psql("SELECT count(*) FROM lb_last_positions WHERE channel_key = 'forged-key'", database: database)
            XCTAssertEqual(stored.trimmingCharacters(in: .whitespacesAndNewlines), "0", "a forged position was stored")
        } catch {
            await eve.stop()
            throw error
        }
        await eve.stop()
    }
}

