import BrokerClient
import BrokerCore
import BrokerProtocol
import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import XCTest

@testable import BrokerPostgres
@testable import BrokerTestSupport
@testable import LocationBroker

/// What the cluster tests share: broker processes on one database, and a stranger on that database.
enum ClusterFixture {
    /// The cluster secret every test node holds.
    static let clusterSecret = "cluster-secret-0123456789-0123456789-0123"

    /// The environment of a cluster node named `name` on `store`: the cluster secret, a heartbeat every 2 seconds
    /// (so a lost listener is noticed within the tests' deadlines) and a publish rate tests do not hit.
    static func environment(_ name: String, store: String) -> [String: String] {
        [
            "LOCATION_BROKER_STORE": store, "LOCATION_BROKER_NODE_ID": name,
            "LOCATION_BROKER_CLUSTER_SECRET": clusterSecret, "LOCATION_BROKER_CLUSTER_HEARTBEAT_SECONDS": "2",
            "LOCATION_BROKER_PUBLISH_RATE": "1000", "LOCATION_BROKER_PUBLISH_BURST": "1000",
        ]
    }

    /// The database name of a store URL.
    static func databaseName(_ store: String) -> String {
        URL(string: store)?.lastPathComponent ?? ""
    }

    /// `PUT`s a donation through `node`.
    static func put(
        _ id: String, on node: BrokerProcess, donor: String, volunteer: String, state: DonationState,
        home: Home = LiveBroker.home, institution: Institution = LiveBroker.institution,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let update = DonationUpdate(donor: donor, volunteer: volunteer, state: state, home: home, institution: institution)
        let body = String(decoding: try WireJSON.encode(update), as: UTF8.self)
        let response = try await LiveBroker.backend(port: node.port, .put, "/v1/donations/\(id)", body: body)
        XCTAssertEqual(response.status, .ok, String(buffer: response.body ?? .init()), file: file, line: line)
    }

    static func connect(_ identity: String, to node: BrokerProcess) async throws -> BrokerConnection {
        let connection = try await BrokerConnection.connect(url: "ws://127.0.0.1:\(node.port)/v1/ws", token: try await LiveBroker.token(identity))
        guard case .welcome = try await connection.next() else { throw BrokerClientError("no welcome") }
        return connection
    }

    /// Subscribes to the donation, retrying while the node has not yet heard of a change made on another node.
    static func subscribe(
        _ donor: BrokerConnection, to donation: String, since: Int64? = nil, within limit: Duration = .seconds(10)
    ) async throws -> ServerFrame.Subscribed {
        let deadline = ContinuousClock.now + limit
        while true {
            try await donor.send(.subscribe(.init(id: "s", target: .donation(donation), since: since)))
            let frame = try await donor.next()
            if case .subscribed(let subscribed) = frame { return subscribed }
            guard ContinuousClock.now < deadline else { throw BrokerClientError("could not subscribe: \(frame)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The next position frame, skipping presence and state frames, within `limit`.
    static func nextPosition(_ donor: BrokerConnection, within limit: Duration = .seconds(15)) async throws -> ServerFrame.PositionUpdate {
        let deadline = ContinuousClock.now + limit
        while true {
            guard ContinuousClock.now < deadline else { throw WaitTimeout("a position reaches the donor", deadline: deadline) }
            let frame = try await donor.next()
            if case .position(let update) = frame { return update }
            if case .unsubscribed = frame { throw BrokerClientError("unsubscribed while waiting for a position: \(frame)") }
        }
    }

    /// One series of a node's `/metrics`, such as `broker_cluster_connected`.
    static func metric(_ series: String, of node: BrokerProcess) async throws -> Double? {
        let response = try await LiveBroker.request(port: node.port, .get, "/metrics")
        let text = String(buffer: response.body ?? .init())
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}

extension XCTestCase {
    /// A broker process named `name` on the cluster's database, stopped when the test ends, whatever happened.
    func startNode(_ name: String, store: String) async throws -> BrokerProcess {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cluster-\(UUID().uuidString.prefix(8))")
        return try await startBrokerProcess(
            database: folder.appendingPathComponent("unused.sqlite").path, extraEnvironment: ClusterFixture.environment(name, store: store))
    }
}

/// A role with no right but CONNECT on the cluster's database, that LISTENs where the nodes do (the control
/// channel and every shard's) and may NOTIFY: what anybody with a login on that PostgreSQL can do.
final class Eavesdropper: Sendable {
    private let connection: PostgresConnection
    private let heard = NIOLockedValueBox<[(channel: String, payload: String)]>([])
    private let listener = NIOLockedValueBox<Task<Void, Never>?>(nil)
    /// LISTENs confirmed so far.
    private let confirmed = NIOLockedValueBox(0)

    /// Every NOTIFY channel the nodes use.
    static let channels = [PostgresDonationStore.eventChannel] + (0..<ClusterShards.count).map(ClusterShards.channel)

    private init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Creates the role `name` (LOGIN only) and starts listening as it on every channel the nodes use.
    static func start(server: PostgresServer, store: String, role name: String) async throws -> Eavesdropper {
        try await server.psql("CREATE ROLE \(name) LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE")
        let configuration = PostgresConnection.Configuration(
            host: "127.0.0.1", port: server.port, username: name, password: nil, database: ClusterFixture.databaseName(store), tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: Logger(label: "eavesdropper"))
        let eavesdropper = Eavesdropper(connection: connection)
        let listening = Latch()
        let task = Task {
            await withTaskGroup(of: Void.self) { group in
                for channel in channels {
                    group.addTask {
                        _ = try? await connection.listen(on: channel) { notifications in
                            if eavesdropper.confirmed.withLockedValue({ $0 += 1; return $0 }) == channels.count { listening.open() }
                            for try await notification in notifications {
                                eavesdropper.heard.withLockedValue { $0.append((channel, notification.payload)) }
                            }
                        }
                        // A LISTEN that failed or ended: never leave the start waiting.
                        listening.open()
                    }
                }
            }
        }
        eavesdropper.listener.withLockedValue { $0 = task }
        do {
            try await withDeadline("the eavesdropper listens on every channel") { await listening.wait() }
        } catch {
            await eavesdropper.stop()
            throw error
        }
        return eavesdropper
    }

    /// Every payload heard so far, on any channel.
    var payloads: [String] { heard.withLockedValue { $0.map(\.payload) } }

    /// Every payload heard so far, with the channel it was heard on.
    var heardOn: [(channel: String, payload: String)] { heard.withLockedValue { $0 } }

    /// Sends `payload` on `channel` (the control channel unless told), as the nodes would.
    func notify(_ payload: String, on channel: String = PostgresDonationStore.eventChannel) async throws {
        try await connection.query("SELECT pg_notify(\(channel), \(payload))", logger: Logger(label: "eavesdropper"))
    }

    /// Runs `query` as this role, as anybody with a login may.
    func run(_ query: PostgresQuery) async throws {
        _ = try await connection.query(query, logger: Logger(label: "eavesdropper")).collect()
    }

    func stop() async {
        listener.withLockedValue { $0 }?.cancel()
        try? await connection.close()
    }
}
