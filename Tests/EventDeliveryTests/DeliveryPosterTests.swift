import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
import XCTest

@testable import EventDelivery

/// The poster against a real receiver on a free loopback port: what arrives, and what a receiver cannot make the
/// sender do (follow it elsewhere, wait forever, read without end).
final class DeliveryPosterTests: XCTestCase {
    private var server: RecordingHTTPServer!
    private var client: HTTPClient!

    override func setUp() async throws {
        server = try await RecordingHTTPServer.start()
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: DeliveryPoster.clientConfiguration())
    }

    override func tearDown() async throws {
        try await client?.shutdown()
        try await server?.stop()
    }

    func testTheBodyAndHeadersArriveAsSent() async throws {
        let poster = DeliveryPoster(client: client, timeout: .seconds(10))
        let body = #"{"type":"tracking.arrived","timestamp":"2026-11-27T16:20:00.000Z","data":{"donation":"d-1","destination":"home"}}"#
        let signed = try WebhookSigner(secrets: [WebhookSecret.generate()]).headers(id: "evt_0123", timestamp: 1_790_000_000, body: body)
        var headers = HTTPHeaders(signed.fields.map { ($0.name, $0.value) })
        headers.add(name: "Content-Type", value: "application/json")

        let outcome = await poster.post(Array(body.utf8), to: server.url("/hooks/ponte"), headers: headers)

        XCTAssertEqual(outcome, .status(204))
        let request = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(request.method, .POST)
        XCTAssertEqual(request.uri, "/hooks/ponte")
        XCTAssertEqual(String(decoding: request.body, as: UTF8.self), body)
        XCTAssertEqual(request.headers["webhook-id"], ["evt_0123"])
        XCTAssertEqual(request.headers["webhook-timestamp"], ["1790000000"])
        XCTAssertEqual(request.headers["webhook-signature"], [signed.signature])
        XCTAssertEqual(request.headers["content-type"], ["application/json"])
    }

    func testTheReceiversStatusIsReturned() async throws {
        let poster = DeliveryPoster(client: client, timeout: .seconds(10))
        for status in [200, 201, 410, 429, 503] {
            let outcome = await poster.post(Array("x".utf8), to: server.url("/status/\(status)"), headers: [:])
            XCTAssertEqual(outcome, .status(status))
        }
    }

    func testARedirectIsNotFollowed() async throws {
        let poster = DeliveryPoster(client: client, timeout: .seconds(10))
        let outcome = await poster.post(Array("secret-ish".utf8), to: server.url("/redirect"), headers: ["webhook-id": "evt_1"])
        XCTAssertEqual(outcome, .status(307))
        XCTAssertEqual(server.requests.map(\.uri), ["/redirect"], "nothing was sent to /landing")
    }

    func testAClientThatFollowsRedirectsIsCaught() async throws {
        var configuration = DeliveryPoster.clientConfiguration()
        configuration.redirectConfiguration = .follow(max: 3, allowCycles: false)
        let following = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        let outcome = await DeliveryPoster(client: following, timeout: .seconds(10)).post(Array("x".utf8), to: server.url("/redirect"), headers: [:])
        XCTAssertEqual(outcome, .failed("the HTTP client followed a redirect; deliveries need one that does not"))
        try await following.shutdown()
    }

    func testAReceiverThatNeverAnswersTimesOut() async throws {
        let poster = DeliveryPoster(client: client, timeout: .milliseconds(300))
        let outcome = await poster.post(Array("x".utf8), to: server.url("/hang"), headers: [:])
        XCTAssertEqual(outcome, .failed("timed out after 0.3 seconds"))
        XCTAssertEqual(server.requests.map(\.uri), ["/hang"], "the request did arrive: it is the answer that never came")
    }

    func testAnAnswerWhoseBodyNeverComesTimesOut() async throws {
        let poster = DeliveryPoster(client: client, timeout: .milliseconds(300))
        let outcome = await poster.post(Array("x".utf8), to: server.url("/stall-body"), headers: [:])
        XCTAssertEqual(outcome, .failed("timed out after 0.3 seconds"), "the deadline covers the body, not only the head")
    }

    func testAHugeAnswerIsCutShort() async throws {
        let poster = DeliveryPoster(client: client, timeout: .seconds(20), responseBodyLimit: 4096)
        let outcome = await poster.post(Array("x".utf8), to: server.url("/huge"), headers: [:])
        XCTAssertEqual(outcome, .status(200))
        let server = try XCTUnwrap(server)
        try await waitUntil("the receiver sees the sender hang up before the 64 MiB are read") { server.hugeAnswerAbandoned }
    }

    func testARefusedConnectionIsAShortFailureWithoutThePath() async throws {
        let closed = try await RecordingHTTPServer.start()
        let url = closed.url("/push/secret-subscription-token")
        try await closed.stop()
        // The client tries to connect again until its connect timeout, so a short one keeps the test short.
        let impatient = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: DeliveryPoster.clientConfiguration(connectTimeout: .milliseconds(500)))
        let outcome = await DeliveryPoster(client: impatient, timeout: .seconds(10)).post(Array("x".utf8), to: url, headers: [:])
        try await impatient.shutdown()
        XCTAssertEqual(outcome, .failed("could not connect: Connection refused"))
    }

    /// Waits until `condition` holds, failing after 10 seconds.
    private func waitUntil(_ what: String, _ condition: @escaping @Sendable () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { return XCTFail("timed out waiting until \(what)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
