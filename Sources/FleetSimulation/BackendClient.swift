import AsyncHTTPClient
import BrokerProtocol
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// The backend's side of the broker: `PUT`, `GET` and `DELETE /v1/donations/{id}` with the backend key.
///
/// AsyncHTTPClient keeps up to ``connections`` connections to the broker alive and reuses them, so that thousands
/// of donations can be created without running out of ports. Each attempt of a request is bounded by the timeout;
/// a request goes at most twice (when the first attempt went unanswered). The owner calls ``shutdown()`` when done,
/// on every path: a client that is never shut down keeps its connections open.
public final class BackendClient: Sendable {
    /// A refusal from the donations API.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var status: Int
        /// The error code of the body (`illegal-transition`, `unauthorized`...), when there is one.
        public var code: String?
        public var message: String

        public var description: String { "HTTP \(status)\(code.map { " \($0)" } ?? ""): \(message)" }
    }

    /// A complete response.
    private struct Reply: Sendable {
        var status: Int
        var body: ByteBuffer
    }

    /// How many connections to the broker are kept open and reused at most.
    public static let connections = 32
    /// The largest response body read; the API's answers are a few hundred bytes.
    static let maximumBodyBytes = 1 << 20

    /// `http://host:port`, the address requests go to.
    private let origin: String
    private let key: String
    private let timeout: TimeAmount
    private let client: HTTPClient

    /// A client for the broker at `baseURL` (`http://127.0.0.1:8080`); each attempt of a request may take `timeout`.
    /// - Throws: ``SimulationError`` when the address is not an `http://` URL with a host.
    public init(
        baseURL: String, backendKey: String, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        timeout: TimeAmount = .seconds(15)
    ) throws {
        guard let components = URLComponents(string: baseURL), components.scheme == "http", let host = components.host, !host.isEmpty else {
            throw SimulationError("--api must be an http:// address such as http://127.0.0.1:8080, not '\(baseURL)'")
        }
        let hostInURL = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        self.origin = "http://\(hostInURL):\(components.port ?? 80)"
        self.key = backendKey
        self.timeout = timeout
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(5), read: timeout),
            connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: Self.connections))
        configuration.httpVersion = .http1Only
        // A refused connection fails the request at once, as "cannot reach", instead of being tried again until the
        // request's timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        self.client = HTTPClient(eventLoopGroup: group, configuration: configuration)
    }

    /// Creates or moves a donation.
    /// - Throws: ``Failure`` when the broker refuses it (for example 409 `illegal-transition`); ``SimulationError``
    ///   when it cannot be asked or does not answer (``SimulationError/isTimeout``).
    @discardableResult
    public func put(_ id: String, _ update: DonationUpdate) async throws -> Donation {
        let body = try WireJSON.encode(update)
        let reply = try await send(.PUT, donation: id, body: ByteBuffer(bytes: body))
        guard reply.status == 200 else { throw failure(reply) }
        return try JSONDecoder().decode(Donation.self, from: Data(reply.body.readableBytesView))
    }

    /// The stored donation, or `nil` when the broker does not know it.
    public func get(_ id: String) async throws -> Donation? {
        let reply = try await send(.GET, donation: id, body: nil)
        if reply.status == 404 { return nil }
        guard reply.status == 200 else { throw failure(reply) }
        return try JSONDecoder().decode(Donation.self, from: Data(reply.body.readableBytesView))
    }

    /// Deletes a donation; `false` when the broker did not know it.
    @discardableResult
    public func delete(_ id: String) async throws -> Bool {
        let reply = try await send(.DELETE, donation: id, body: nil)
        if reply.status == 404 { return false }
        guard reply.status == 204 else { throw failure(reply) }
        return true
    }

    /// Closes the connections; the client cannot be used afterwards. A second call does nothing.
    public func shutdown() async {
        // The one error shutting down can give is "already shut down", which is what was asked for.
        try? await client.shutdown()
    }

    private func failure(_ reply: Reply) -> Failure {
        struct Body: Decodable { let error: BrokerError }
        if let body = try? JSONDecoder().decode(Body.self, from: Data(reply.body.readableBytesView)) {
            return Failure(status: reply.status, code: body.error.code.rawValue, message: body.error.message)
        }
        return Failure(status: reply.status, code: nil, message: String(buffer: reply.body))
    }

    /// Sends a request, and once more when the first attempt went unanswered: a kept-alive connection may have been
    /// closed by the broker while it waited in the pool, or lose the request (a DELETE at a fleet's wind-down was
    /// lost about once a run so). The failed connection is closed, so the second attempt runs on another one. Every
    /// request of this client may go twice: a PUT names the whole new state and a second DELETE answers 404.
    private func send(_ method: HTTPMethod, donation id: String, body: ByteBuffer?) async throws -> Reply {
        var request = HTTPClientRequest(url: origin + "/v1/donations/" + id)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
        }
        // Without the id: the caller names the donation, and errors of one cause read alike for every donation.
        let what = "\(method) /v1/donations/{id}"
        do {
            return try await attempt(request)
        } catch let error where Self.wentUnanswered(error) {
            do {
                return try await attempt(request)
            } catch {
                throw describe(error, what)
            }
        } catch {
            throw describe(error, what)
        }
    }

    /// One attempt, bounded by the timeout.
    private func attempt(_ request: HTTPClientRequest) async throws -> Reply {
        let response = try await client.execute(request, timeout: timeout)
        let body = try await response.body.collect(upTo: Self.maximumBodyBytes)
        return Reply(status: Int(response.status.code), body: body)
    }

    /// Whether `error` says the request was sent, or about to be, and no answer came: worth asking again.
    static func wentUnanswered(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError {
            return [.deadlineExceeded, .readTimeout, .writeTimeout, .remoteConnectionClosed].contains(error)
        }
        if let error = error as? ChannelError { return error == .ioOnClosedChannel || error == .eof }
        return false
    }

    /// `error` as a ``SimulationError`` worded for the person who runs the fleet: the same words whatever connection
    /// the request went on, so that the fleet's statistics count each cause once (``FleetStats/kind(of:)``).
    func describe(_ error: any Error, _ what: String) -> any Error {
        switch error {
        case is CancellationError, is SimulationError:
            return error
        case is NIOTooManyBytesError:
            return SimulationError("the broker's answer to \(what) is larger than \(Self.maximumBodyBytes) bytes")
        case let error as HTTPClientError where [.deadlineExceeded, .readTimeout, .writeTimeout, .getConnectionFromPoolTimeout].contains(error):
            return SimulationError("the broker did not answer \(what) within \(Self.words(timeout))", isTimeout: true)
        case let error as HTTPClientError where error == .remoteConnectionClosed:
            return SimulationError("the broker closed the HTTP connection before answering \(what)")
        case let error as HTTPClientError where error == .connectTimeout:
            return SimulationError("cannot reach the broker's API at \(origin): no connection within 5 s", isTimeout: true)
        case is NIOConnectionError, is IOError, ChannelError.connectTimeout:
            return SimulationError("cannot reach the broker's API at \(origin): \(error)")
        default:
            return SimulationError("\(what) failed: \(error)")
        }
    }

    /// "15 s", or "300 ms" below a second.
    static func words(_ time: TimeAmount) -> String {
        time.nanoseconds < 1_000_000_000 ? "\(time.nanoseconds / 1_000_000) ms" : "\(time.nanoseconds / 1_000_000_000) s"
    }
}
