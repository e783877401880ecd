/// The machine-readable error codes of the wire protocol and the backend API.
///
/// Each code is documented in docs/PROTOCOL.md. Clients branch on the code, never on the message.
public enum ErrorCode: String, Codable, Sendable, CaseIterable {
    /// The frame or body is not what the protocol allows: not JSON, a missing or mistyped field, an unknown type.
    case badRequest = "bad-request"
    /// A published position is out of range: latitude, longitude, accuracy, speed, heading or timestamp.
    case invalidPosition = "invalid-position"
    /// The caller may not do this: publishing on another identity's channel, or subscribing to a channel
    /// without a trackable donation of their own.
    case forbidden
    /// The donation does not exist, or the caller is not its donor (the two are indistinguishable on purpose).
    case notFound = "not-found"
    /// The caller's own donation exists but is not in a trackable state.
    case notTrackable = "not-trackable"
    /// The publish rate of the volunteer is over its limit.
    case rateLimited = "rate-limited"
    /// A frame, a field or a body is larger than the limit.
    case tooLarge = "too-large"
    /// Missing, malformed, badly signed or expired credentials.
    case unauthorized
    /// A connection opened with a watch link asked for more than watching its one donation: publishing,
    /// subscribing by channel, or subscribing to another donation.
    case watchOnly = "watch-only"
    /// A limit was reached: subscriptions per connection, connections per identity, or a refusal budget.
    case limitReached = "limit-reached"
    /// A backend update asks for a move that Ponte's state machine forbids.
    case illegalTransition = "illegal-transition"
    /// The server is shutting down or otherwise cannot take the request now.
    case unavailable
    /// A fault inside the broker; the request may be retried.
    case `internal`
}

/// An error as it travels on the wire: a code, and a message a person understands.
public struct BrokerError: Error, Codable, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// WebSocket close codes the broker uses. 4000-4999 are reserved for applications by RFC 6455.
public enum CloseCode {
    /// The server is shutting down (RFC 6455 "going away").
    public static let goingAway: UInt16 = 1001
    /// A frame was larger than the limit (RFC 6455 "message too big").
    public static let messageTooBig: UInt16 = 1009
    /// The token's `exp` passed while the connection was open.
    public static let tokenExpired: UInt16 = 4001
    /// The connection could not keep up with its outbound queue.
    public static let slowConsumer: UInt16 = 4008
    /// The connection sent too many invalid frames.
    public static let tooManyErrors: UInt16 = 4009
    /// The identity already holds the maximum number of open connections.
    public static let tooManyConnections: UInt16 = 4029
}
