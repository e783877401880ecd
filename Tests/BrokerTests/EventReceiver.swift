import Atomics
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle
import XCTest

@testable import BrokerTestSupport

/// A backend's webhook endpoint (or a browser's push service) in the test process: a real HTTP server on a free
/// loopback port that records every request it gets and answers what the test tells it to, so a test can play a
/// receiver that is down, hangs, redirects or forgets a subscription.
final class EventReceiver: Sendable {
    /// One request as it arrived.
    struct Received: Sendable {
        let method: String
        let path: String
        /// Header names in lower case; a repeated header's values joined with ", ".
        let headers: [String: String]
        let body: Data
        let at: ContinuousClock.Instant

        var text: String { String(decoding: body, as: UTF8.self) }
        var webhookID: String? { headers["webhook-id"] }
    }

    /// What the receiver answers to one request.
    enum Answer: Sendable {
        case status(Int)
        /// Reads the request and never answers (until the receiver stops).
        case hang
        /// `302 Found` to `location`.
        case redirect(String)
    }

    let port: Int
    private let state: Shared
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    var url: String { "http://127.0.0.1:\(port)" }

    private init(port: Int, state: Shared, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.state = state
        self.group = group
        self.task = task
    }

    /// Starts a receiver answering `answer` (given each request and how many came before it); 200 by default.
    static func start(_ answer: @escaping @Sendable (Received, Int) -> Answer = { _, _ in .status(200) }) async throws -> EventReceiver {
        let state = Shared(answer)
        let router = Router()
        // Every method is recorded: a client that follows a 302 turns a POST into a GET.
        let handle: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            var headers: [String: String] = [:]
            for field in request.headers {
                let name = field.name.canonicalName.lowercased()
                headers[name] = headers[name].map { "\($0), \(field.value)" } ?? field.value
            }
            let received = Received(
                method: request.method.rawValue, path: request.uri.path, headers: headers, body: Data(buffer: bytes), at: .now)
            switch state.record(received) {
            case .status(let code):
                return Response(status: .init(code: code))
            case .redirect(let location):
                return Response(status: .found, headers: [.location: location])
            case .hang:
                // Holds the request open without a byte of answer; ends when the receiver stops, so that its
                // shutdown does not wait for a request nobody will answer.
                while !state.stopping.load(ordering: .relaxed) && !Task.isCancelled { try? await Task.sleep(for: .milliseconds(50)) }
                return Response(status: .serviceUnavailable)
            }
        }
        for method in [HTTPRequest.Method.get, .post, .put, .delete, .patch] { router.on("**", method: method, use: handle) }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "test-event-receiver")
        logger.logLevel = .warning
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { portContinuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        guard let port = try await withDeadline("the event receiver listens", { await ports.first { _ in true } }) else {
            try await task.value
            throw ReceiverError("the event receiver stopped before it listened")
        }
        return EventReceiver(port: port, state: state, group: group, task: task)
    }

    /// Every request so far, in the order they arrived.
    var received: [Received] { state.log.withLockedValue { $0 } }

    /// Answers `answer` from now on.
    func answer(_ answer: @escaping @Sendable (Received, Int) -> Answer) {
        state.answer.withLockedValue { $0 = answer }
    }

    /// Waits until the requests so far satisfy `condition`.
    func waitFor(
        _ what: String, within limit: Duration = .seconds(30), _ condition: @escaping ([Received]) -> Bool
    ) async throws {
        try await waitUntil(what, deadline: .now + limit, poll: .milliseconds(20)) { condition(received) }
    }

    func stop() async throws {
        state.stopping.store(true, ordering: .relaxed)
        await group.triggerGracefulShutdown()
        try await task.value
    }

    private final class Shared: Sendable {
        let log = NIOLockedValueBox<[Received]>([])
        let answer: NIOLockedValueBox<@Sendable (Received, Int) -> Answer>
        let stopping = ManagedAtomic(false)

        init(_ answer: @escaping @Sendable (Received, Int) -> Answer) { self.answer = NIOLockedValueBox(answer) }

        func record(_ received: Received) -> Answer {
            let before = log.withLockedValue { log in
                defer { log.append(received) }
                return log.count
            }
            return answer.withLockedValue { $0 }(received, before)
        }
    }
}

extension XCTestCase {
    /// A receiver stopped when this test ends, whatever happened.
    func startReceiver(_ answer: @escaping @Sendable (EventReceiver.Received, Int) -> EventReceiver.Answer = { _, _ in .status(200) }) async throws
        -> EventReceiver
    {
        let receiver = try await EventReceiver.start(answer)
        addTeardownBlock { try? await receiver.stop() }
        return receiver
    }
}

struct ReceiverError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A Standard Webhooks secret, and the check a backend makes with it, written here from the specification (an
/// HMAC of our own, not the broker's signer).
struct TestWebhookSecret: Sendable {
    let key: SymmetricKey
    /// `whsec_` and the base64 of the key, as configured.
    let text: String

    static func random() -> TestWebhookSecret {
        let key = SymmetricKey(size: .bits256)
        let text = "whsec_" + key.withUnsafeBytes { Data($0).base64EncodedString() }
        return TestWebhookSecret(key: key, text: text)
    }

    /// Whether one of the `v1,` signatures of the request is this secret's HMAC of `{id}.{timestamp}.{body}`.
    func verifies(_ request: EventReceiver.Received) -> Bool {
        signatures(request).contains(expectedSignature(request))
    }

    func expectedSignature(_ request: EventReceiver.Received) -> String {
        let signed = Data("\(request.headers["webhook-id"] ?? "").\(request.headers["webhook-timestamp"] ?? "").".utf8) + request.body
        return Data(HMAC<SHA256>.authenticationCode(for: signed, using: key)).base64EncodedString()
    }

    func signatures(_ request: EventReceiver.Received) -> [String] {
        (request.headers["webhook-signature"] ?? "").split(separator: " ").compactMap { part in
            part.hasPrefix("v1,") ? String(part.dropFirst(3)) : nil
        }
    }
}

/// One webhook as a backend reads it.
struct ReceivedEvent: Sendable, Equatable {
    let id: String
    let type: String
    let donation: String
    let data: [String: String]

    init?(_ request: EventReceiver.Received) {
        guard
            let id = request.webhookID,
            let object = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any],
            let type = object["type"] as? String, let data = object["data"] as? [String: Any], let donation = data["donation"] as? String
        else { return nil }
        self.id = id
        self.type = type
        self.donation = donation
        self.data = data.mapValues { "\($0)" }
    }
}

/// The backend's privacy check on everything it was sent: no coordinate (no lat/lon key, no number with four or
/// more decimals), no e-mail, no home label, no institution name.
func assertNothingPrivate(in requests: [EventReceiver.Received], file: StaticString = #filePath, line: UInt = #line) {
    let secrets = [LiveBroker.home.label, LiveBroker.institution.name].compactMap { $0 }
    for request in requests {
        let text = request.text
        XCTAssertFalse(text.range(of: #"\d\.\d{4,}"#, options: .regularExpression) != nil, "a coordinate-like number in \(text)", file: file, line: line)
        XCTAssertFalse(text.range(of: #""(lat|lon|lng|latitude|longitude)""#, options: .regularExpression) != nil, "a coordinate key in \(text)", file: file, line: line)
        XCTAssertFalse(text.contains("@"), "an e-mail in \(text)", file: file, line: line)
        for secret in secrets { XCTAssertFalse(text.contains(secret), "\(secret) in \(text)", file: file, line: line) }
    }
}
