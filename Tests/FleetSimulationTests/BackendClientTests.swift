import Atomics
import BrokerProtocol
import NIOCore
import NIOHTTP1
import NIOPosix
import XCTest

@testable import FleetSimulation

/// The simulator's backend calls against a small HTTP server that misbehaves on purpose: a request the broker does
/// not answer goes once more on another connection, a timeout is said as one (and counted under one kind however
/// the donations are named), and a broker that cannot be reached is said at once.
final class BackendClientTests: XCTestCase {
    func testARequestDroppedWithoutAnAnswerIsAskedAgainOnAnotherConnection() async throws {
        let server = try await MisbehavingServer.start(.dropFirstRequest)
        let backend = try BackendClient(baseURL: server.url, backendKey: "k")
        do {
            let deleted = try await backend.delete("d-1")
            XCTAssertTrue(deleted, "answered on the second attempt")
            XCTAssertEqual(server.requests, 2)
            XCTAssertEqual(server.connections, 2, "the second attempt went on a fresh connection")
        } catch {
            XCTFail("\(error)")
        }
        await backend.shutdown()
        try await server.stop()
    }

    func testARequestNeverAnsweredEndsAsATimeoutAfterTwoBoundedAttempts() async throws {
        let server = try await MisbehavingServer.start(.neverAnswer)
        let backend = try BackendClient(baseURL: server.url, backendKey: "k", timeout: .milliseconds(300))
        let started = ContinuousClock.now
        var failure: (any Error)?
        do {
            try await backend.delete("fleet-a1-7-2")
        } catch {
            failure = error
        }
        let waited = ContinuousClock.now - started
        await backend.shutdown()
        try await server.stop()
        let timeout = try XCTUnwrap(failure as? SimulationError, "\(String(describing: failure))")
        XCTAssertTrue(timeout.isTimeout, timeout.description)
        XCTAssertEqual(timeout.description, "the broker did not answer DELETE /v1/donations/{id} within 300 ms")
        XCTAssertEqual(server.requests, 2, "asked once more, then given up")
        XCTAssertLessThan(waited, .seconds(5), "each attempt is bounded by the timeout")
        XCTAssertEqual(
            FleetStats.kind(of: "DELETE fleet-a1-7-2: \(timeout)"), "DELETE: the broker did not answer DELETE /v#/donations/{id} within # ms",
            "timeouts of every donation are one kind")
    }

    func testABrokerThatCannotBeReachedIsSaidAtOnce() async throws {
        let server = try await MisbehavingServer.start(.neverAnswer)
        let url = server.url
        try await server.stop()
        let backend = try BackendClient(baseURL: url, backendKey: "k")
        let started = ContinuousClock.now
        do {
            _ = try await backend.get("d-1")
            XCTFail("nothing listens there")
        } catch let error as SimulationError {
            XCTAssertTrue(error.description.hasPrefix("cannot reach the broker's API at \(url)"), error.description)
            XCTAssertFalse(error.isTimeout)
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5), "a refused connection is not waited on until the timeout")
        await backend.shutdown()
    }

    func testAFleetThatCannotStartShutsItsClientDown() async throws {
        let server = try await MisbehavingServer.start(.neverAnswer)
        let url = server.url
        try await server.stop()
        let area = try Fixtures.buenosAires()
        let configuration = FleetConfiguration(
            webSocketURL: "ws://127.0.0.1:1", apiURL: url, backendKey: "k", jwtSecret: String(repeating: "s", count: 32), volunteers: 1, area: area)
        let output = FleetOutput(line: { _ in }, status: { _ in }, isLive: false)
        do {
            _ = try await FleetRunner(configuration: configuration, output: output).run()
            XCTFail("the API cannot be reached")
        } catch let error as SimulationError {
            // A client left running would trap when released in a debug build (AsyncHTTPClient checks it).
            XCTAssertTrue(error.description.contains("cannot reach the broker's API"), error.description)
        }
    }

    func testAnAddressThatIsNotHTTPIsRefused() {
        XCTAssertThrowsError(try BackendClient(baseURL: "https://127.0.0.1:8080", backendKey: "k")) { error in
            XCTAssertTrue("\(error)".hasPrefix("--api must be an http:// address"), "\(error)")
        }
    }
}

/// An HTTP server on a free port that answers `DELETE` and `GET` with 204 and 404, or misbehaves as told.
private final class MisbehavingServer: Sendable {
    enum Behaviour: Sendable {
        /// Closes the first connection once it has read the first request, without answering it.
        case dropFirstRequest
        /// Reads requests and never answers.
        case neverAnswer
    }

    private let channel: any Channel
    private let counts: Counts

    final class Counts: Sendable {
        let requests = ManagedAtomic(0)
        let connections = ManagedAtomic(0)
    }

    var url: String { "http://127.0.0.1:\(channel.localAddress?.port ?? 0)" }
    var requests: Int { counts.requests.load(ordering: .relaxed) }
    var connections: Int { counts.connections.load(ordering: .relaxed) }

    private init(channel: any Channel, counts: Counts) {
        self.channel = channel
        self.counts = counts
    }

    static func start(_ behaviour: Behaviour) async throws -> MisbehavingServer {
        let counts = Counts()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                counts.connections.wrappingIncrement(by: 1, ordering: .relaxed)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Responder(behaviour: behaviour, counts: counts))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return MisbehavingServer(channel: channel, counts: counts)
    }

    func stop() async throws {
        try await channel.close()
    }

    private final class Responder: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let behaviour: Behaviour
        let counts: Counts
        private var method = HTTPMethod.GET

        init(behaviour: Behaviour, counts: Counts) {
            self.behaviour = behaviour
            self.counts = counts
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                method = head.method
            case .body:
                break
            case .end:
                let request = counts.requests.wrappingIncrementThenLoad(by: 1, ordering: .relaxed)
                switch behaviour {
                case .neverAnswer:
                    return
                case .dropFirstRequest where request == 1:
                    context.close(promise: nil)
                    return
                case .dropFirstRequest:
                    break
                }
                let status: HTTPResponseStatus = method == .DELETE ? .noContent : .notFound
                var headers = HTTPHeaders()
                headers.add(name: "Content-Length", value: "0")
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
