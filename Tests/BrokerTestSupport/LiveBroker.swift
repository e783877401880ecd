// The live harness reaches the broker's internal types (`BrokerConfiguration`, `Broker`), which only a debug build
// exposes to `@testable import`; `swift build -c release` builds this target too, and compiles this file empty.
#if DEBUG
import BrokerClient
import BrokerProtocol
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import NIOConcurrencyHelpers
import XCTest

@testable import BrokerAuth
@testable import BrokerCore
@testable import LocationBroker

/// A real broker inside the test process, on a free port with its own SQLite file: the one live harness of every
/// test target. Start it with ``XCTestCase/startBroker(database:_:)`` or ``withLiveBroker(_:_:)``, which stop it
/// whether the test passes, fails or throws; ``stop()`` may be called any number of times.
final class LiveBroker: Sendable {
    let running: RunningBroker
    let database: String
    private let stopping = NIOLockedValueBox<Task<Void, any Error>?>(nil)

    static let jwtSecret = "test-secret-0123456789-0123456789-abcdef"
    static let backendKey = "test-backend-key-0123456789-0123456789"

    /// Starts a broker that the caller must stop; prefer ``XCTestCase/startBroker(database:_:)``. Pass the
    /// `database` of a stopped broker to restart on its file.
    /// - Parameter logger: where the broker logs (default: warnings and above, to standard error).
    static func start(
        database: String? = nil, logger: Logger? = nil, _ adjust: (inout BrokerConfiguration) -> Void = { _ in }
    ) async throws -> LiveBroker {
        var configuration = BrokerConfiguration()
        configuration.port = 0
        configuration.database = database ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("broker-test-\(UUID().uuidString)").appendingPathComponent("broker.sqlite").path
        configuration.jwtSecret = jwtSecret
        configuration.backendKey = backendKey
        configuration.shutdownGraceSeconds = 5
        adjust(&configuration)
        var standard = Logger(label: "test-broker")
        standard.logLevel = .warning
        let logger = logger ?? standard
        return LiveBroker(running: try await RunningBroker.start(configuration: configuration, logger: logger), database: configuration.database)
    }

    private init(running: RunningBroker, database: String) {
        self.running = running
        self.database = database
    }

    var broker: Broker { running.broker }
    var port: Int { running.port }
    var webSocketURL: String { "ws://127.0.0.1:\(port)/v1/ws" }
    var apiURL: String { "http://127.0.0.1:\(port)" }

    /// Shuts down as SIGTERM would, and waits until it has (30 s at most). A second call waits for the first.
    func stop() async throws {
        let task = stopping.withLockedValue { stopping in
            if let stopping { return stopping }
            let running = running
            let task = Task { try await running.stop() }
            stopping = task
            return task
        }
        try await task.value(waitingFor: "the broker on port \(port) stopped", deadline: .now + .seconds(30))
    }

    /// The value of one metric line of `/metrics`, such as `broker_rejections_total{code="forbidden"}`.
    func metric(_ series: String) -> Double? {
        broker.metrics.value(of: series)
    }

    /// A valid HS256 token for `identity`.
    static func token(_ identity: String, ttl: Int64 = 3600, secret: String = jwtSecret) async throws -> String {
        try await TokenVerifier.mintHS256(secret: secret, identity: identity, ttlSeconds: ttl)
    }

    /// Connects as `identity` and reads the welcome frame.
    func connect(_ identity: String) async throws -> BrokerConnection {
        let connection = try await BrokerConnection.connect(url: webSocketURL, token: try await Self.token(identity))
        guard case .welcome(let welcome) = try await connection.next() else { throw BrokerClientError("no welcome") }
        XCTAssertEqual(welcome.identity, identity.lowercased())
        return connection
    }

    /// One HTTP request to the broker.
    func request(_ method: HTTPRequest.Method, _ path: String, headers: HTTPFields = [:], body: String? = nil) async throws -> TestClient.Response {
        try await Self.request(port: port, method, path, headers: headers, body: body)
    }

    /// One HTTP request to a broker on `port`.
    static func request(port: Int, _ method: HTTPRequest.Method, _ path: String, headers: HTTPFields = [:], body: String? = nil) async throws -> TestClient.Response {
        // Hummingbird's test client sends no Host, which every HTTP/1.1 client must (and the broker's upgrades need).
        var headers = headers
        let host = HTTPField.Name("Host")!
        if headers[host] == nil { headers[host] = "127.0.0.1:\(port)" }
        return try await TestClient.withClient(host: "127.0.0.1", port: port) { [headers] client in
            try await client.execute(.init(path, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }))
        }
    }

    /// A request to the donations API with the backend key.
    func backend(_ method: HTTPRequest.Method, _ path: String, body: String? = nil, key: String = backendKey) async throws -> TestClient.Response {
        try await Self.backend(port: port, method, path, body: body, key: key)
    }

    /// A request to the donations API of a broker on `port`.
    static func backend(port: Int, _ method: HTTPRequest.Method, _ path: String, body: String? = nil, key: String = backendKey) async throws -> TestClient.Response {
        try await request(port: port, method, path, headers: [.authorization: "Bearer \(key)", .contentType: "application/json"], body: body)
    }

    /// Creates or moves a donation through the backend API and checks that the broker accepted it.
    @discardableResult
    func put(
        _ id: String, donor: String = "donor@example.org", volunteer: String? = "vol@example.org", state: DonationState,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws -> TestClient.Response {
        let response = try await backend(.put, "/v1/donations/\(id)", body: Self.donationJSON(donor: donor, volunteer: volunteer, state: state))
        XCTAssertEqual(response.status, .ok, String(buffer: response.body ?? ByteBuffer()), file: file, line: line)
        return response
    }

    static let home = Home(lat: -34.6037, lon: -58.3816, label: "Av. Corrientes 1234")
    static let institution = Institution(lat: -34.5875, lon: -58.4206, name: "Caritas Palermo")

    static func donationJSON(donor: String, volunteer: String?, state: DonationState) -> String {
        let update = DonationUpdate(donor: donor, volunteer: volunteer, state: state, home: home, institution: institution)
        return (try? WireJSON.encode(update)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

extension XCTestCase {
    /// Starts a broker that is stopped when this test ends, whether it passed, failed or threw.
    func startBroker(database: String? = nil, _ adjust: (inout BrokerConfiguration) -> Void = { _ in }) async throws -> LiveBroker {
        let live = try await LiveBroker.start(database: database, adjust)
        addTeardownBlock { try await live.stop() }
        return live
    }
}

/// Runs `body` with a broker started with `adjust`, and stops the broker whether `body` succeeds or throws.
func withLiveBroker(_ adjust: (inout BrokerConfiguration) -> Void = { _ in }, _ body: (LiveBroker) async throws -> Void) async throws {
    let live = try await LiveBroker.start(adjust)
    do {
        try await body(live)
    } catch {
        try? await live.stop()
        throw error
    }
    try await live.stop()
}

extension TestClient.Response {
    /// The `{"error":{...}}` body of a refusal.
    var error: BrokerError? {
        struct Body: Decodable { let error: BrokerError }
        guard let body else { return nil }
        return (try? JSONDecoder().decode(Body.self, from: Data(buffer: body)))?.error
    }
}

extension BrokerConnection {
    /// Publishes a position with an id and returns the ack (or throws on an error frame).
    func publish(_ position: Position, id: String = UUID().uuidString) async throws -> ServerFrame.Ack {
        try await send(.publish(.init(id: id, position: position)))
        let frame = try await next()
        guard case .ack(let ack) = frame else { throw BrokerClientError("expected an ack, got \(frame)") }
        return ack
    }

    /// Publishes a position that must be kept, and returns it. A donor receives it under their own donation's seq,
    /// which is not the volunteer's (the ack's): a test follows a position by what it is.
    @discardableResult
    func publishKept(_ position: Position) async throws -> Position {
        let ack = try await publish(position)
        guard ack.seq != nil else { throw BrokerClientError("the position was not kept: \(ack)") }
        return position
    }

    /// Proves that nothing is queued for this connection: a request whose reply must be the very next frame.
    func expectNothingPending(file: StaticString = #filePath, line: UInt = #line) async throws {
        let probe = "probe-\(UUID().uuidString.prefix(8))"
        try await send(.unsubscribe(.init(id: probe, target: .channel("nobody@probe.invalid"))))
        let frame = try await next()
        guard case .error(let error) = frame, error.re == probe else {
            XCTFail("expected nothing before the probe's reply, got \(frame)", file: file, line: line)
            return
        }
    }
}

/// A point `metres` north of the donor's home; positions move along a line so arrival can be placed exactly.
func position(metresFromHome metres: Double, timestamp: Int64 = WallClock.system.now()) -> Position {
    let point = Geodesy.destination(fromLat: LiveBroker.home.lat, lon: LiveBroker.home.lon, bearing: 0, distance: metres)
    return Position(lat: point.lat, lon: point.lon, accuracy: 5, speed: 8, heading: 180, timestamp: timestamp)
}
#endif
