import BrokerProtocol
import Foundation
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket
import WSClient

/// A WebSocket connection to a location broker, for the simulator, the watcher and the tests.
///
/// Frames are read in order with ``next(timeout:)``; frames are sent with ``send(_:)``.
public final class BrokerConnection: Sendable {
    private let events = EventQueue()
    private let writer = NIOLockedValueBox<WebSocketOutboundWriter?>(nil)
    private let task = NIOLockedValueBox<Task<Void, Never>?>(nil)
    /// Resumed once, when the upgrade succeeds or fails.
    private let opening = NIOLockedValueBox<CheckedContinuation<Void, any Error>?>(nil)
    private let lastInbound = NIOLockedValueBox<ContinuousClock.Instant>(.now)

    /// How long ``close()`` waits for the close handshake before cutting the socket.
    private let closeTimeout: Duration

    private init(closeTimeout: Duration) {
        self.closeTimeout = closeTimeout
    }

    /// Connects to `url` (`ws://host:port/v1/ws`) with `token`, sent as `Authorization: Bearer`.
    /// - Throws: ``BrokerClientError`` when the upgrade is refused (for example a bad token) or the server is unreachable.
    ///   - tls: for `wss://`: whom to trust (the system's roots when `nil`). On Apple platforms the connection runs on
    ///     Network.framework, elsewhere on NIOPosix with NIOSSL.
    ///   - timeout: how long the TCP connection, TLS and the upgrade may take together.
    ///   - keepalive: when set, a ping goes out every `keepalive` and the socket is closed when the answer to one
    ///     has not come by the next ("Ping timeout"): a path that went silent is left within two periods.
    ///   - closeTimeout: how long ``close()`` waits for the broker's close frame before cutting the socket.
    public static func connect(
        url: String, token: String?, tls: BrokerTLS? = nil, timeout: Duration = .seconds(10),
        keepalive: Duration? = nil, closeTimeout: Duration = .seconds(15),
        logger: Logger = Logger(label: "broker-client")
    ) async throws -> BrokerConnection {
        let connection = BrokerConnection(closeTimeout: closeTimeout)
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: 1 << 20, additionalHeaders: headers, closeTimeout: closeTimeout,
            autoPing: keepalive.map { .enabled(timePeriod: $0) } ?? .disabled)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            connection.opening.withLockedValue { $0 = continuation }
            let task = Task {
                do {
                    let closeFrame = try await WebSocketTransport.run(url: url, configuration: configuration, tls: tls, logger: logger) {
                        inbound, outbound, _ in
                        connection.writer.withLockedValue { $0 = outbound }
                        connection.lastInbound.withLockedValue { $0 = .now }
                        connection.opening.withLockedValue { $0.take() }?.resume()
                        for try await message in inbound.messages(maxSize: 1 << 20) {
                            connection.lastInbound.withLockedValue { $0 = .now }
                            guard case .text(let text) = message else { continue }
                            if let frame = try? WireJSON.decodeServerFrame(text.utf8) {
                                connection.events.push(.frame(frame, text: text))
                            } else {
                                connection.events.push(.undecodable(text: text))
                            }
                            // The reader fell too far behind: the queue ended, so leave the socket.
                            if connection.events.isFinished { break }
                        }
                    }
                    connection.events.push(.closed(code: closeFrame.map { Self.number($0.closeCode) }, reason: closeFrame?.reason))
                } catch {
                    if let pending = connection.opening.withLockedValue({ $0.take() }) {
                        let refused = (error as? WebSocketClientError) == .webSocketUpgradeFailed
                        pending.resume(
                            throwing: BrokerClientError("could not open a WebSocket to \(url): \(error)", kind: refused ? .upgradeRefused : .unreachable))
                    } else {
                        connection.events.push(.closed(code: nil, reason: "\(error)"))
                    }
                }
                connection.writer.withLockedValue { $0 = nil }
                connection.events.finish()
            }
            connection.task.withLockedValue { $0 = task }
            // A server that drops the socket mid-upgrade can leave the upgrade pending: give up in time.
            Task {
                try? await Task.sleep(for: timeout)
                if let pending = connection.opening.withLockedValue({ $0.take() }) {
                    task.cancel()
                    pending.resume(throwing: BrokerClientError("could not open a WebSocket to \(url) within \(timeout)", kind: .unreachable))
                }
            }
        }
        return connection
    }

    private static func number(_ code: WebSocketErrorCode) -> Int {
        switch code {
        case .normalClosure: 1000
        case .goingAway: 1001
        case .protocolError: 1002
        case .unacceptableData: 1003
        case .dataInconsistentWithMessage: 1007
        case .policyViolation: 1008
        case .messageTooLarge: 1009
        case .missingExtension: 1010
        case .unexpectedServerError: 1011
        case .unknown(let value): Int(value)
        }
    }

    /// Sends a client frame.
    public func send(_ frame: ClientFrame) async throws {
        let data = try WireJSON.encode(frame)
        try await sendText(String(decoding: data, as: UTF8.self))
    }

    /// Sends any text frame, valid or not.
    public func sendText(_ text: String) async throws {
        guard let writer = writer.withLockedValue({ $0 }) else { throw BrokerClientError.notConnected }
        try await writer.write(.text(text))
    }

    /// Sends one raw WebSocket frame as it is, for tests of hostile input (fragments, control frames...).
    public func sendFrame(opcode: WebSocketOpcode, fin: Bool = true, bytes: [UInt8]) async throws {
        guard let writer = writer.withLockedValue({ $0 }) else { throw BrokerClientError.notConnected }
        try await writer.write(.custom(WebSocketFrame(fin: fin, opcode: opcode, data: ByteBuffer(bytes: bytes))))
    }

    /// Sends a binary frame.
    public func sendBinary(_ bytes: [UInt8]) async throws {
        guard let writer = writer.withLockedValue({ $0 }) else { throw BrokerClientError.notConnected }
        try await writer.write(.binary(ByteBuffer(bytes: bytes)))
    }

    /// How many position frames were dropped unread because the reader fell more than 4096 events behind: the newest
    /// are kept, and no other frame is dropped (a queue full of those ends the connection instead).
    public var droppedPositions: Int { events.droppedPositions }

    /// When the last text frame (or the upgrade) arrived: how long the broker has been silent on this connection.
    public var lastReceived: ContinuousClock.Instant { lastInbound.withLockedValue { $0 } }

    /// The next event, or `nil` when nothing came within `timeout` or the connection is over and drained.
    public func nextEvent(timeout: Duration = .seconds(10)) async -> BrokerEvent? {
        await events.next(timeout: timeout)
    }

    /// The next event, or `nil` when nothing came by `deadline` (`nil`: no deadline), the connection is over and
    /// drained, or ``interruptWait()`` was called: how the clients' loops wait, with no timer while nothing is due.
    func nextEvent(until deadline: ContinuousClock.Instant?) async -> BrokerEvent? {
        await events.next(until: deadline.map { NIODeadline.now() + .nanoseconds(LinkControl.nanoseconds($0 - .now)) })
    }

    /// Ends the wait in ``nextEvent(until:)`` now, or the next one at once if none is in progress.
    func interruptWait() {
        events.interrupt()
    }

    /// The next server frame.
    /// - Throws: when the connection closed, a frame was not understood, or nothing came within `timeout`.
    public func next(timeout: Duration = .seconds(10)) async throws -> ServerFrame {
        switch await nextEvent(timeout: timeout) {
        case .frame(let frame, _): return frame
        case .undecodable(let text): throw BrokerClientError("the broker sent a frame this client does not understand: \(text)")
        case .closed(let code, let reason): throw BrokerClientError("the connection closed (code \(code.map(String.init) ?? "none"), \(reason ?? ""))")
        case nil: throw BrokerClientError("no frame within \(timeout)")
        }
    }

    /// Cuts the connection without a close handshake (it is taken as dead: a close frame would never be answered),
    /// and waits until it is gone.
    public func abort() async {
        let running = task.withLockedValue { $0 }
        running?.cancel()
        await running?.value
    }

    /// Closes the connection with 1000 and waits until it is closed, at most about `closeTimeout`: a path that went
    /// silent never answers the close frame, so the socket is then cut.
    public func close() async {
        let running = task.withLockedValue { $0 }
        let closeTimeout = closeTimeout
        let watchdog = Task {
            try await Task.sleep(for: closeTimeout)
            running?.cancel()
        }
        if let writer = writer.withLockedValue({ $0 }) {
            try? await writer.close(.normalClosure, reason: nil)
        }
        await running?.value
        watchdog.cancel()
    }
}
