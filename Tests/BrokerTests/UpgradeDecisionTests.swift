import BrokerProtocol
import Logging
import NIOCore
import NIOEmbedded
import Synchronization
import XCTest

@testable import BrokerCore
@testable import LocationBroker

/// A WebSocket upgrade with a client token is decided on the socket's event loop: no Swift task, no actor hop
/// (issue 17, the connect storm). The socket is an `EmbeddedChannel` whose loop runs only when the test runs it,
/// so an upgrade that waited for a task would still be pending when the test looks.
final class UpgradeDecisionTests: XCTestCase {
    static let secret = "upgrade-decision-secret-0123456789-0123456789"
    /// RFC 6455's sample key, and the accept value the RFC gives for it.
    static let key = "dGhlIHNhbXBsZSBub25jZQ==", accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

    /// One accepted socket served by the broker's own channel setup, with a broker that takes HS256 tokens.
    final class Socket {
        let channel = EmbeddedChannel()
        let hub: Hub
        let metrics = BrokerMetrics()
        let value: BrokerServerChannel.Value
        /// How the upgrade ended, once it has.
        let outcome = Outcome()
        /// How many times an upgrade request's token was judged (each a signature check).
        let authorizations = Count()

        final class Count: Sendable {
            let value = Mutex(0)
        }

        final class Outcome: Sendable {
            let value = Mutex<String?>(nil)
        }

        init() async throws {
            let clock = ManualClock(start: 1_700_000_000_000)
            hub = Hub(settings: HubSettings(BrokerConfiguration()), metrics: metrics, clock: clock.wallClock, framing: TextFrame.framing)
            var configuration = BrokerConfiguration()
            configuration.jwtSecret = UpgradeDecisionTests.secret
            let endpoint = WebSocketEndpoint(
                verifier: try await TokenVerifier(configuration: configuration),
                watchLinks: await WatchTokenVerifier(backendKey: "upgrade-decision-backend-key-0123456789", ttlSeconds: 600) { _ in nil },
                metrics: metrics, hub: hub, isDraining: { false })
            let server = BrokerServerChannel(
                responder: { _, _, _ in }, http1: .init(), webSocket: .init(maxFrameBytes: 4096),
                authorize: { [authorizations] in
                    authorizations.value.withLock { $0 += 1 }
                    return endpoint.authorize($0, from: $1)
                }, refuse: { await endpoint.refusal(for: $0, decided: $1) },
                messages: ClientMessageHandler(hub: hub, metrics: metrics, clock: clock.wallClock, heartbeatSeconds: 30, invalidFramesPerMinute: 10))
            try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).get()
            value = try await server.setup(channel: channel, logger: Logger(label: "UpgradeDecisionTests")).get()
            value.upgradeResult.whenComplete { [outcome] result in
                outcome.value.withLock {
                    switch result {
                    case .success(.webSocket): $0 = "webSocket"
                    case .success(.refusedUpgrade(_, _, let reason)): $0 = "refused" + (reason.map { " \($0.status.code) \($0.error.code.rawValue)" } ?? "")
                    case .success(.http): $0 = "http"
                    case .failure(let error): $0 = "failed: \(error)"
                    }
                }
            }
        }

        /// Sends an upgrade request for `/v1/ws` with `token`, as one packet, and runs only the socket's loop.
        func upgrade(token: String) {
            let request =
                "GET /v1/ws HTTP/1.1\r\nHost: broker\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Key: \(UpgradeDecisionTests.key)\r\nAuthorization: Bearer \(token)\r\n\r\n"
            do {
                try channel.writeInbound(ByteBuffer(string: request))
            } catch {
                // NIO's upgrader reports a refused upgrade as an error on the pipeline before answering it.
                pipelineError = error
            }
            channel.embeddedEventLoop.run()
        }

        /// The error a refused upgrade left on the pipeline.
        private(set) var pipelineError: (any Error)?

        /// Everything the broker wrote so far, as text.
        func written() throws -> String {
            var text = ""
            while var bytes = try channel.readOutbound(as: ByteBuffer.self) { text += bytes.readString(length: bytes.readableBytes) ?? "" }
            return text
        }

        func stop() {
            _ = try? channel.finish(acceptAlreadyClosed: true)
        }
    }

    func testAClientTokenUpgradesWithoutATask() async throws {
        let socket = try await Socket()
        defer { socket.stop() }
        let token = try await TokenVerifier.mintHS256(secret: Self.secret, identity: "donor@example.org", ttlSeconds: 600)
        socket.upgrade(token: token)
        // Nothing but the socket's own loop has run: the 101 is written and the WebSocket pipeline is in place.
        let written = try socket.written()
        // Byte for byte what NIO's upgrader writes (RFC 6455's sample key and its accept value).
        let switching = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: \(Self.accept)\r\nConnection: upgrade\r\n\r\n"
        XCTAssertTrue(written.hasPrefix(switching), "no 101 without running a task: \(written.prefix(120).debugDescription)")
        XCTAssertTrue(written.contains(#""type":"welcome""#), "the WebSocket handlers did not start")
        XCTAssertEqual(socket.outcome.value.withLock { $0 }, "webSocket")
        XCTAssertNil(socket.pipelineError)
    }

    /// A forged token is the cheapest thing an attacker can send: refusing it must not cost more signature checks
    /// than before the hand-written upgrade (one to decide, one to say why), whichever path reads the request.
    func testAForgedTokenIsJudgedOnceBeforeItsRefusal() async throws {
        let socket = try await Socket()
        defer { socket.stop() }
        let forged = try await TokenVerifier.mintHS256(secret: "an-attacker-secret-0123456789-0123456789", identity: "donor@example.org", ttlSeconds: 600)
        socket.upgrade(token: forged)
        // The refusal carries the reason it was decided with to the 401, which does not judge the token again.
        XCTAssertEqual(socket.outcome.value.withLock { $0 }, "refused 401 unauthorized")
        XCTAssertEqual(socket.authorizations.value.withLock { $0 }, 1, "the hand-written upgrade's decision is not taken again by NIO's path")
    }

    func testARefusedClientTokenIsDecidedWithoutATask() async throws {
        let socket = try await Socket()
        defer { socket.stop() }
        let forged = try await TokenVerifier.mintHS256(secret: "an-attacker-secret-0123456789-0123456789", identity: "donor@example.org", ttlSeconds: 600)
        socket.upgrade(token: forged)
        // Handed to the refusal path at once (which answers the 401 with its JSON body from a task).
        XCTAssertEqual(socket.outcome.value.withLock { $0 }, "refused 401 unauthorized")
        XCTAssertFalse(try socket.written().contains("101"))
    }
}
