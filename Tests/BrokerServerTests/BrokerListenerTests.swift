import BrokerClient
import BrokerProtocol
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle
import XCTest

@testable import BrokerAuth
@testable import BrokerHTTP
@testable import BrokerServer
@testable import BrokerTestSupport

/// The broker's listening socket (``BrokerListener``): a WebSocket is served by its pipeline with no task; only the
/// connections that stay HTTP get one; a graceful shutdown stops accepting and lets the answer in progress finish.
final class BrokerListenerTests: XCTestCase {
    static let secret = "listener-test-secret-0123456789-0123456789"

    /// ``BrokerServerChannel``, counting the connections handed to a task.
    struct CountingChannel: ServerChildChannel {
        let base: BrokerServerChannel
        let handed: Counter

        func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<BrokerServerChannel.Value> {
            base.setup(channel: channel, logger: logger)
        }

        func handle(value: BrokerServerChannel.Value, logger: Logger) async {
            handed.value.withLockedValue { $0 += 1 }
            await base.handle(value: value, logger: logger)
        }
    }

    final class Counter: Sendable {
        let value = NIOLockedValueBox(0)
    }

    /// A listener on a port of the system's choice, with a `/hello` route and a `/slow` route that answers only when
    /// the test releases it.
    final class Listening: Sendable {
        let group: ServiceGroup
        let run: Task<Void, any Error>
        let port: Int
        let handed: Counter
        /// Yields once a `/slow` request is being answered.
        let slowStarted: AsyncStream<Void>
        private let slowStartedContinuation: AsyncStream<Void>.Continuation
        /// `/slow` answers once this is finished.
        private let release: AsyncStream<Void>.Continuation

        init() async throws {
            var logger = Logger(label: "BrokerListenerTests")
            logger.logLevel = .warning
            (slowStarted, slowStartedContinuation) = AsyncStream.makeStream(of: Void.self)
            let (released, release) = AsyncStream.makeStream(of: Void.self)
            self.release = release
            let router = Router(context: BrokerRequestContext.self)
            router.get("hello") { _, _ in "hello" }
            router.get("slow") { [slowStartedContinuation] _, _ in
                slowStartedContinuation.yield()
                for await _ in released {}
                return "done"
            }
            let channel = try await BrokerListenerTests.serverChannel(
                responder: HTTPResponding.responder(router: router.buildResponder(), date: HTTPDate(), serverName: "location-broker", logger: logger))
            let handed = Counter()
            self.handed = handed
            let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
            let listener = BrokerListener(
                child: CountingChannel(base: channel, handed: handed), host: "127.0.0.1", port: 0,
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger, onListening: { portContinuation.yield($0) })
            let group = ServiceGroup(configuration: .init(services: [listener], gracefulShutdownSignals: [], logger: logger))
            self.group = group
            run = Task { try await group.run() }
            do {
                port = try await withDeadline("the listener listens") {
                    for await port in ports { return port }
                    throw CancellationError()
                }
            } catch {
                run.cancel()
                throw error
            }
        }

        /// Lets `/slow` answer.
        func releaseSlow() { release.finish() }

        /// Shuts the listener down gracefully and waits for it to stop.
        func stop() async throws {
            releaseSlow()
            await group.triggerGracefulShutdown()
            try await run.value(waitingFor: "the listener stopped")
        }

        func get(_ path: String) async throws -> TestClient.Response {
            try await TestClient.withClient(host: "127.0.0.1", port: port) { try await $0.get(path) }
        }
    }

    private func startListening() async throws -> Listening {
        let listening = try await Listening()
        addTeardownBlock { try await listening.stop() }
        return listening
    }

    func testAWebSocketAndARefusedUpgradeGetNoTaskAndEveryConnectionThatStaysHTTPGetsOne() async throws {
        let listening = try await startListening()
        let token = try await TokenVerifier.mintHS256(secret: Self.secret, identity: "donor@example.org", ttlSeconds: 600)
        var sockets: [BrokerConnection] = []
        for _ in 0..<3 {
            let socket = try await BrokerConnection.connect(url: "ws://127.0.0.1:\(listening.port)/v1/ws", token: token)
            guard case .welcome = try await socket.next() else { return XCTFail("no welcome") }
            sockets.append(socket)
        }
        let hello = try await listening.get("/hello")
        XCTAssertEqual(hello.status, .ok)
        XCTAssertEqual(String(buffer: hello.body ?? ByteBuffer()), "hello")
        // A refused upgrade is answered by the upgrade handler, on the event loop: no task either.
        do {
            _ = try await BrokerConnection.connect(url: "ws://127.0.0.1:\(listening.port)/v1/ws", token: "not-a-token", timeout: .seconds(5))
            XCTFail("a bad token was upgraded")
        } catch {}
        try await waitUntil("the HTTP request was handed to a task") { listening.handed.value.withLockedValue { $0 } >= 1 }
        // The WebSockets still work, and none of them was handed to a task.
        for socket in sockets {
            try await socket.send(.unsubscribe(.init(id: "probe", target: .channel("nobody@example.org"))))
            guard case .error(let error) = try await socket.next() else { return XCTFail("no reply on an open WebSocket") }
            XCTAssertEqual(error.re, "probe")
            await socket.close()
        }
        XCTAssertEqual(listening.handed.value.withLockedValue { $0 }, 1, "only the HTTP request gets a task")
    }

    func testResponsesCarryTheDateAndTheServersName() async throws {
        let listening = try await startListening()
        let before = Date()
        let hello = try await listening.get("/hello")
        let after = Date()
        XCTAssertEqual(hello.headers[.server], "location-broker")
        let date = try XCTUnwrap(hello.headers[.date])
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let parsed = try XCTUnwrap(formatter.date(from: date), "not an IMF-fixdate: \(date)")
        XCTAssert(parsed >= before.addingTimeInterval(-1) && parsed <= after, "\(date) is not now")
    }

    func testAGracefulShutdownStopsAcceptingAndLetsTheAnswerInProgressFinish() async throws {
        let listening = try await Listening()
        let port = listening.port
        let slow = Task { try await listening.get("/slow") }
        do {
            try await withDeadline("the slow request arrived") {
                for await _ in listening.slowStarted { return }
            }
            let stopping = Task { await listening.group.triggerGracefulShutdown() }
            try await waitUntil("the listening socket is closed") { !Self.accepts(port: port) }
            await stopping.value
            XCTAssertFalse(listening.run.isCancelled)
            listening.releaseSlow()
            let answer = try await slow.value(waitingFor: "the slow request was answered")
            XCTAssertEqual(answer.status, .ok)
            XCTAssertEqual(String(buffer: answer.body ?? ByteBuffer()), "done")
            try await listening.run.value(waitingFor: "the listener stopped after the answer")
        } catch {
            slow.cancel()
            try? await listening.stop()
            throw error
        }
    }

    func testAGracefulShutdownClosesAnIdleKeptAliveConnectionAndAWebSocketIsNotWaitedFor() async throws {
        let listening = try await Listening()
        do {
            // An HTTP/1.1 connection that stays open after its answer, and a WebSocket (closed by the drain in a
            // real broker, not by the listener).
            let idle = try await blocking("an HTTP request on a kept-alive connection") { try RawHTTP(port: listening.port) }
            defer { idle.close() }
            let answer = try await blocking("its answer") { try idle.request("GET /hello HTTP/1.1\r\nHost: broker\r\n\r\n") }
            XCTAssert(answer.hasPrefix("HTTP/1.1 200"), answer)
            let token = try await TokenVerifier.mintHS256(secret: Self.secret, identity: "donor@example.org", ttlSeconds: 600)
            let socket = try await BrokerConnection.connect(url: "ws://127.0.0.1:\(listening.port)/v1/ws", token: token)
            guard case .welcome = try await socket.next() else { return XCTFail("no welcome") }
            await listening.group.triggerGracefulShutdown()
            // Without being asked to finish, the idle connection would hold the listener for its 90 s idle time.
            let closed = try await blocking("the idle connection was closed") { idle.readsEndOfStream() }
            XCTAssertTrue(closed)
            try await listening.run.value(waitingFor: "the listener stopped")
            await socket.close()
        } catch {
            try? await listening.stop()
            throw error
        }
    }

    /// A plain TCP client speaking HTTP/1.1 by hand, with blocking reads (10 s at most each).
    final class RawHTTP: Sendable {
        let fd: Int32

        init(port: Int) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard BrokerListenerTests.connect(fd, port: port) else {
                Glibc.close(fd)
                throw POSIXError(.ECONNREFUSED)
            }
        }

        /// Sends `request` and returns what arrives in one read.
        func request(_ request: String) throws -> String {
            let bytes = Array(request.utf8)
            guard write(fd, bytes, bytes.count) == bytes.count else { throw POSIXError(.EIO) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { throw POSIXError(.ECONNRESET) }
            return String(decoding: buffer[..<count], as: UTF8.self)
        }

        /// Whether the server closed the connection (a read of 0 bytes) before the read timeout.
        func readsEndOfStream() -> Bool {
            var buffer = [UInt8](repeating: 0, count: 256)
            return read(fd, &buffer, buffer.count) == 0
        }

        func close() { Glibc.close(fd) }
    }

    /// Whether a TCP connection to `port` on 127.0.0.1 is accepted.
    private static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return connect(fd, port: port)
    }

    /// Connects `fd` to `port` on 127.0.0.1.
    static func connect(_ fd: Int32, port: Int) -> Bool {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
