import BrokerAuth
import BrokerCore
import BrokerHTTP
import BrokerProtocol
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// `POST /v1/owntracks`: positions from the OwnTracks app in HTTP mode, published on the volunteer's channel.
///
/// The app authenticates with HTTP Basic auth: the volunteer's e-mail as user name, their broker token as
/// password. A `location` message becomes a publish with the same checks, limits and errors as a WebSocket
/// `publish`; every other `_type` (transitions, waypoints, last wills...) is accepted and ignored. The answer
/// to an accepted message is the empty JSON array OwnTracks expects (it would hold messages for the app).
package struct OwnTracksRoutes: Sendable {
    let verifier: TokenVerifier
    let hub: Hub
    /// Counts each refusal by its error code (the broker's metrics).
    let countRefusal: @Sendable (ErrorCode) -> Void
    let clock: WallClock
    let maxBodyBytes: Int

    package init(
        verifier: TokenVerifier, hub: Hub, countRefusal: @escaping @Sendable (ErrorCode) -> Void, clock: WallClock, maxBodyBytes: Int
    ) {
        self.verifier = verifier
        self.hub = hub
        self.countRefusal = countRefusal
        self.clock = clock
        self.maxBodyBytes = maxBodyBytes
    }

    /// The answer to every accepted message.
    static let accepted = "[]"

    package func register(on router: Router<BrokerRequestContext>) {
        router.post("v1/owntracks") { request, context in await ingest(request, context) }
    }

    /// The fields of a `location` message the broker reads; the app sends many more, which are ignored.
    private struct Location: Decodable {
        /// Degrees.
        let lat: Double
        let lon: Double
        /// When the fix was taken, in seconds since the Unix epoch.
        let tst: Double
        /// Horizontal accuracy, metres.
        let acc: Double?
        /// Speed, km/h.
        let vel: Double?
        /// Course over ground, degrees.
        let cog: Double?
    }

    private struct Envelope: Decodable {
        let type: String

        private enum CodingKeys: String, CodingKey {
            case type = "_type"
        }
    }

    private func refuse(_ status: HTTPResponse.Status, _ error: BrokerError) -> Response {
        countRefusal(error.code)
        var response = JSONResponse.error(status, error)
        if status == .unauthorized {
            response.headers[.wwwAuthenticate] = #"Basic realm="location-broker", charset="UTF-8""#
        }
        return response
    }

    private func ingest(_ request: Request, _ context: BrokerRequestContext) async -> Response {
        guard let credentials = Self.basicCredentials(request.headers) else {
            return refuse(
                .unauthorized,
                .init(.unauthorized, "the OwnTracks endpoint needs HTTP Basic auth: your e-mail address as user name and your token as password"))
        }
        let identity: String
        switch verifier.verify(credentials.password) {
        case .failure(let error):
            return refuse(.unauthorized, error)
        case .success(let verified):
            identity = verified.identity
        }
        guard Identity.canonical(credentials.user) == identity else {
            return refuse(
                .unauthorized,
                .init(.unauthorized, "the user name is not the identity your token was issued for; use your account's e-mail address"))
        }
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: maxBodyBytes)
        } catch {
            return refuse(error.status, error.error)
        }
        let data = Data(buffer: body)
        let type: String
        do {
            type = try JSONDecoder().decode(Envelope.self, from: data).type
        } catch let error as DecodingError {
            return refuse(.badRequest, Self.describeEnvelope(error))
        } catch {
            return refuse(.badRequest, .init(.badRequest, "the body is not valid JSON"))
        }
        guard type == "location" else {
            context.logger.trace("ignored an OwnTracks message", metadata: ["type": "\(type.prefix(32))", "identity": "\(identity)"])
            return Self.acceptedResponse()
        }
        let position: Position
        switch Self.position(from: data, now: clock.now()) {
        case .failure(let error):
            return refuse(.badRequest, error)
        case .success(let valid):
            position = valid
        }
        switch hub.publish(as: identity, position: position) {
        case .success(let outcome):
            // OwnTracks drops a fix once it is answered 200, so a fix kept for nobody is still accepted (a refusal
            // would make the app send it again and again); the headers tell a person or a script what became of it.
            var response = Self.acceptedResponse()
            PublishOutcomeHeaders.set(tracking: outcome.tracking, untracked: outcome.untracked, on: &response.headers)
            return response
        case .failure(let error) where error.code == .rateLimited:
            return refuse(.tooManyRequests, error)
        case .failure(let error):
            context.logger.error("could not publish an OwnTracks position", metadata: ["identity": "\(identity)", "error": "\(error)"])
            return refuse(.internalServerError, error)
        }
    }

    private static func acceptedResponse() -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: accepted)))
    }

    /// The user name and password of an `Authorization: Basic` header.
    static func basicCredentials(_ headers: HTTPFields) -> (user: String, password: String)? {
        guard let value = headers[.authorization] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic" else { return nil }
        guard let decoded = Data(base64Encoded: parts[1].trimmingCharacters(in: .whitespaces)) else { return nil }
        let text = String(decoding: decoded, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":") else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// Converts a `location` message to a position and checks it as a WebSocket publish is checked. Errors
    /// name the OwnTracks field.
    static func position(from data: Data, now: Int64) -> Result<Position, BrokerError> {
        func invalid(_ message: String) -> Result<Position, BrokerError> { .failure(BrokerError(.invalidPosition, message)) }
        let location: Location
        do {
            location = try JSONDecoder().decode(Location.self, from: data)
        } catch DecodingError.keyNotFound(let key, _) {
            return invalid("\(key.stringValue) is required in a location message")
        } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context) {
            return invalid("\(context.codingPath.map(\.stringValue).joined(separator: ".")) must be a number")
        } catch DecodingError.dataCorrupted {
            // As on the WebSocket: a number JSON cannot represent as a double (1e999) makes the body unreadable.
            return .failure(BrokerError(.badRequest, "the body holds a number JSON cannot represent"))
        } catch {
            return invalid("the location message could not be read")
        }
        let milliseconds = (location.tst * 1000).rounded()
        guard milliseconds.isFinite, milliseconds > 0, milliseconds < 9e15 else {
            return invalid("tst must be seconds since the Unix epoch")
        }
        guard Int64(milliseconds) <= now + Position.maximumClockSkewMilliseconds else {
            return invalid("tst is more than 60 seconds in the future; check the phone's clock")
        }
        if let acc = location.acc, !(acc.isFinite && acc >= 0) { return invalid("acc must be a number of metres, 0 or more") }
        if let vel = location.vel, !(vel.isFinite && vel >= 0) { return invalid("vel must be a speed in km/h, 0 or more") }
        if let cog = location.cog, !(cog.isFinite && cog >= 0 && cog <= 360) { return invalid("cog must be a number of degrees from 0 to 360") }
        let position = Position(
            lat: location.lat, lon: location.lon, accuracy: location.acc, speed: location.vel.map { $0 / 3.6 },
            // A course rounded up to 360 is north.
            heading: location.cog.map { $0 == 360 ? 0 : $0 }, timestamp: Int64(milliseconds))
        // The very checks of a WebSocket publish (latitude and longitude ranges above all).
        if let error = position.validationError(now: now) { return .failure(error) }
        return .success(position)
    }

    private static func describeEnvelope(_ error: DecodingError) -> BrokerError {
        switch error {
        case .keyNotFound:
            return .init(.badRequest, "the body has no \"_type\" field; OwnTracks messages are JSON objects with a _type")
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            if context.codingPath.isEmpty { return .init(.badRequest, "the body must be a JSON object") }
            return .init(.badRequest, "_type must be a string")
        case .dataCorrupted:
            return .init(.badRequest, "the body is not valid JSON (or holds a number JSON cannot represent)")
        @unknown default:
            return .init(.badRequest, "the body could not be read")
        }
    }
}
