import BrokerProtocol
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The backend's side of the broker: `PUT`, `GET` and `DELETE /v1/donations/{id}` with the backend key.
///
/// A small SwiftNIO HTTP/1.1 client that keeps a few connections alive and reuses them, so that thousands of
/// donations can be created without running out of ports.
public final class BackendClient: Sendable {
    /// A refusal from the donations API.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var status: Int
        /// The error code of the body (`illegal-transition`, `unauthorized`...), when there is one.
        public var code: String?
        public var message: String

        public var description: String { "HTTP \(status)\(code.map { " \($0)" } ?? ""): \(message)" }
    }

    private let host: String
    private let port: Int
    private let key: String
    private let group: any EventLoopGroup
    private let timeout: TimeAmount
    private let idle = Mutex<[any Channel]>([])
    private let maximumIdle = 32

    /// A client for the broker at `baseURL` (`http://127.0.0.1:8080`).
    /// - Throws: ``SimulationError`` when the address is not an `http://` URL with a host.
    public init(
        baseURL: String, backendKey: String, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        timeout: TimeAmount = .seconds(15)
    ) throws {
        guard let components = URLComponents(string: baseURL), components.scheme == "http", let host = components.host, !host.isEmpty else {
            throw SimulationError("--api must be an http:// address such as http://127.0.0.1:8080, not '\(baseURL)'")
        }
        self.host = host
        self.port = components.port ?? 80
        self.key = backendKey
        self.group = group
        self.timeout = timeout
    }

    /// Creates or moves a donation.
    /// - Throws: ``Failure`` when the broker refuses it (for example 409 `illegal-transition`).
    @discardableResult
    public func put(_ id: String, _ update: DonationUpdate) async throws -> Donation {
        let body = try WireJSON.encode(update)
        let reply = try await send(.PUT, "/v1/donations/\(id)", body: ByteBuffer(bytes: body))
        guard reply.status == 200 else { throw failure(reply) }
        return try JSONDecoder().decode(Donation.self, from: Data(reply.body.readableBytesView))
    }

    /// The stored donation, or `nil` when the broker does not know it.
    public func get(_ id: String) async throws -> Donation? {
        let reply = try await send(.GET, "/v1/donations/\(id)", body: nil)
        if reply.status == 404 { return nil }
        guard reply.status == 200 else { throw failure(reply) }
        return try JSONDecoder().decode(Donation.self, from: Data(reply.body.readableBytesView))
    }

    /// Deletes a donation; `false` when the broker did not know it.
    @discardableResult
    public func delete(_ id: String) async throws -> Bool {
        let reply = try await send(.DELETE, "/v1/donations/\(id)", body: nil)
        if reply.status == 404 { return false }
        guard reply.status == 204 else { throw failure(reply) }
        return true
    }

    /// Closes the idle connections.
    public func shutdown() {
        for channel in idle.withLock({ channels in defer { channels.removeAll() }; return channels }) {
            channel.close(promise: nil)
        }
    }

    private func failure(_ reply: HTTPReply) -> Failure {
        struct Body: Decodable { let error: BrokerError }
        if let body = try? JSONDecoder().decode(Body.self, from: Data(reply.body.readableBytesView)) {
            return Failure(status: reply.status, code: body.error.code.rawValue, message: body.error.message)
        }
        return Failure(status: reply.status, code: nil, message: String(buffer: reply.body))
    }

    private func send(_ method: HTTPMethod, _ path: String, body: ByteBuffer?) async throws -> HTTPReply {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "\(host):\(port)")
        headers.add(name: "Authorization", value: "Bearer \(key)")
        if let body {
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: String(body.readableBytes))
        } else {
            headers.add(name: "Content-Length", value: "0")
        }
        let head = HTTPRequestHead(version: .http1_1, method: method, uri: path, headers: headers)
        // A kept-alive connection may have been closed by the server meanwhile, or lose the request: one retry on a
        // fresh one. Every request of this client may go twice: a PUT names the whole new state and a second
        // DELETE answers 404.
        let reused = idle.withLock { $0.popLast() }
        if let reused {
            do {
                return try await exchange(on: reused, head: head, body: body)
            } catch is HTTPExchangeHandler.ConnectionClosed {
                // Closed by the server while idle: nothing was done, so the request goes again below.
            } catch is ChannelError {
            } catch let unanswered as SimulationError where unanswered.isTimeout {
                // Not answered on a connection that had waited in the pool: asked again on a fresh one.
            }
        }
        return try await exchange(on: try await connect(), head: head, body: body)
    }

    private func exchange(on channel: any Channel, head: HTTPRequestHead, body: ByteBuffer?) async throws -> HTTPReply {
        let promise = channel.eventLoop.makePromise(of: HTTPReply.self)
        let timer = channel.eventLoop.scheduleTask(in: timeout) {
            promise.fail(SimulationError("the broker did not answer \(head.method) \(head.uri) within \(self.timeout.nanoseconds / 1_000_000_000) s", isTimeout: true))
            channel.close(promise: nil)
        }
        channel.writeAndFlush(HTTPExchange(head: head, body: body, promise: promise), promise: nil)
        do {
            let reply = try await promise.futureResult.get()
            timer.cancel()
            if reply.keepAlive && channel.isActive {
                let kept = idle.withLock { channels -> Bool in
                    guard channels.count < maximumIdle else { return false }
                    channels.append(channel)
                    return true
                }
                if !kept { channel.close(promise: nil) }
            } else {
                channel.close(promise: nil)
            }
            return reply
        } catch {
            timer.cancel()
            channel.close(promise: nil)
            throw error
        }
    }

    private func connect() async throws -> any Channel {
        do {
            return try await ClientBootstrap(group: group)
                .connectTimeout(.seconds(5))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(HTTPExchangeHandler())
                    }
                }
                .connect(host: host, port: port)
                .get()
        } catch {
            throw SimulationError("cannot reach the broker's API at http://\(host):\(port): \(error)")
        }
    }
}
