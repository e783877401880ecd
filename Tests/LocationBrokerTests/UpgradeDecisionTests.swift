import BrokerProtocol
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import XCTest

@testable import BrokerAuth
@testable import BrokerCore
@testable import BrokerTestSupport
@testable import BrokerServer
@testable import BrokerWebSocket
@testable import LocationBroker

/// A WebSocket upgrade with a client token is decided on the socket's event loop: no Swift task, no actor hop
/// (a connect storm's cost). The socket is an `EmbeddedChannel` whose loop runs only when the test runs it,
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
            let value = NIOLockedValueBox(0)
        }

        final class Outcome: Sendable {
            let value = NIOLockedValueBox<String?>(nil)
        }

        /// The verifier of the watch links this socket's broker takes, and the one donation its store holds.
        let watchLinks: WatchTokenVerifier
        let watchLinkDonation: Donation?

        /// - Parameter watchLinkDonation: the donation the store holds for watch links (none by default).
        init(watchLinkDonation: Donation? = nil) async throws {
            self.watchLinkDonation = watchLinkDonation
            let clock = ManualClock(start: 1_700_000_000_000)
            hub = Hub(settings: HubSettings(BrokerConfiguration()), metrics: metrics, clock: clock.wallClock, framing: TextFrame.framing)
            var configuration = BrokerConfiguration()
            configuration.jwtSecret = UpgradeDecisionTests.secret
            watchLinks = await WatchTokenVerifier(backendKey: "upgrade-decision-backend-key-0123456789", ttlSeconds: 600) { id in
                watchLinkDonation?.id == id ? watchLinkDonation : nil
            }
            let endpoint = WebSocketEndpoint(
                verifier: try await TokenVerifier(configuration: configuration), watchLinks: watchLinks, metrics: metrics, hub: hub,
                isDraining: { false })
            let server = BrokerServerChannel(
                responder: { _, _, _ in }, http1: .init(), webSocket: .init(maxFrameBytes: 4096),
                authorize: { [authorizations] in
                    authorizations.value.withLockedValue { $0 += 1 }
                    return endpoint.authorize($0, from: $1)
                }, refusalBody: { endpoint.answer($0) },
                messages: ClientMessageHandler(hub: hub, metrics: metrics, clock: clock.wallClock, heartbeatSeconds: 30, invalidFramesPerMinute: 10))
            try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).get()
            value = try await server.setup(channel: channel, logger: Logger(label: "UpgradeDecisionTests")).get()
            value.upgradeResult.whenComplete { [outcome] result in
                outcome.value.withLockedValue {
                    switch result {
                    case .success(.webSocket): $0 = "webSocket"
                    case .success(.refusedUpgrade): $0 = "refused"
                    case .success(.http): $0 = "http"
                    case .failure(let error): $0 = "failed: \(error)"
                    }
                }
            }
        }

        /// A watch link to the donation with `id`, as the backend gets it.
        func watchLink(for id: String) async throws -> String {
            let donation = try XCTUnwrap(watchLinkDonation)
            return try await watchLinks.mint(for: donation).token
        }

        /// Sends an upgrade request for `/v1/ws` with `token` and then `after`, as one packet, and runs only the
        /// socket's loop.
        func upgrade(token: String, then after: String = "") {
            let request =
                "GET /v1/ws HTTP/1.1\r\nHost: broker\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Key: \(UpgradeDecisionTests.key)\r\nAuthorization: Bearer \(token)\r\n\r\n" + after
            XCTAssertNoThrow(try channel.writeInbound(ByteBuffer(string: request)))
            channel.embeddedEventLoop.run()
        }

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
        XCTAssertEqual(socket.outcome.value.withLockedValue { $0 }, "webSocket")
    }

    /// A forged token is the cheapest thing an attacker can send: refusing it costs one signature check, and its
    /// answer says why without judging the token again.
    func testAForgedTokenIsJudgedOnceBeforeItsRefusal() async throws {
        let socket = try await Socket()
        defer { socket.stop() }
        let forged = try await TokenVerifier.mintHS256(secret: "an-attacker-secret-0123456789-0123456789", identity: "donor@example.org", ttlSeconds: 600)
        socket.upgrade(token: forged)
        XCTAssertEqual(socket.outcome.value.withLockedValue { $0 }, "refused")
        XCTAssertEqual(socket.authorizations.value.withLockedValue { $0 }, 1, "the token was judged once")
        XCTAssertEqual(socket.metrics.value(of: #"broker_rejections_total{code="unauthorized"}"#), 1, "the refusal is counted once")
    }

    func testARefusedClientTokenIsAnsweredWithItsReasonWithoutATaskAndTheSocketCloses() async throws {
        let socket = try await Socket()
        defer { socket.stop() }
        let forged = try await TokenVerifier.mintHS256(secret: "an-attacker-secret-0123456789-0123456789", identity: "donor@example.org", ttlSeconds: 600)
        socket.upgrade(token: forged)
        // Nothing but the socket's own loop has run: the 401 and its JSON body are written, and the socket closed.
        let written = try socket.written()
        XCTAssertTrue(written.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"), written)
        XCTAssertTrue(written.contains("Connection: close\r\n"), written)
        XCTAssertTrue(written.contains(#""code":"unauthorized""#), written)
        XCTAssertFalse(written.contains("101"))
        let body = try XCTUnwrap(written.components(separatedBy: "\r\n\r\n").last)
        XCTAssertTrue(written.contains("Content-Length: \(body.utf8.count)\r\n"), "the length is the body's: \(written)")
        XCTAssertFalse(socket.channel.isActive, "the socket was closed after the answer")
    }

    /// A watch link's check reads the store, which suspends: the socket waits for it on its event loop and is
    /// upgraded by the same handler, with a frame the client sent meanwhile read after the welcome.
    func testAWatchLinkIsUpgradedByTheSameHandlerWhenItsCheckReturns() async throws {
        let donation = Donation(
            id: "don-1", donor: "donor@example.org", volunteer: "volunteer@example.org", state: .beingLookedFor,
            home: Home(lat: -34.6, lon: -58.4, label: "home"), institution: nil, createdAt: 0, updatedAt: 0, incarnation: "incarnation-1")
        let socket = try await Socket(watchLinkDonation: donation)
        defer { socket.stop() }
        let link = try await socket.watchLink(for: "don-1")
        socket.upgrade(token: link, then: "\u{81}\u{80}\u{1}\u{2}\u{3}\u{4}")
        try await waitUntil("the watch link's check returned and the socket was decided") {
            socket.channel.embeddedEventLoop.run()
            return socket.outcome.value.withLockedValue { $0 } != nil
        }
        XCTAssertEqual(socket.outcome.value.withLockedValue { $0 }, "webSocket")
        let written = try socket.written()
        XCTAssertTrue(written.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"), written)
        XCTAssertTrue(written.contains(#""type":"welcome""#), "the WebSocket handlers started")
    }
}
