import BrokerProtocol

/// What a ``BrokerConnection`` receives, in order.
public enum BrokerEvent: Sendable, Equatable {
    /// A server frame, with its exact text (for clients that check bytes).
    case frame(ServerFrame, text: String)
    /// A text frame that is not a server frame this client understands.
    case undecodable(text: String)
    /// The connection ended; the close code and reason the server sent, if any.
    case closed(code: Int?, reason: String?)
}

/// Why a client call failed.
public struct BrokerClientError: Error, CustomStringConvertible, Equatable {
    /// What kind of failure, for code that retries. A struct rather than an enum, so that a later release can add
    /// kinds without breaking an app's `switch` (which needs a `default:`).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: Sendable, Hashable {
            case other, upgradeRefused, unreachable, alreadyRunning
        }

        private let code: Code

        private init(_ code: Code) { self.code = code }

        /// Anything else.
        public static let other = Kind(.other)
        /// The server answered the upgrade with something else than 101 (a refused token, 404, 429, 503...).
        public static let upgradeRefused = Kind(.upgradeRefused)
        /// No WebSocket could be opened: refused, unreachable, timed out, TLS.
        public static let unreachable = Kind(.unreachable)
        /// `run()` was called on a client that is already running (or ran): one client, one run.
        public static let alreadyRunning = Kind(.alreadyRunning)

        public var description: String { "\(code)" }
    }

    public let description: String
    public let kind: Kind

    public init(_ description: String, kind: Kind = .other) {
        self.description = description
        self.kind = kind
    }

    static let notConnected = BrokerClientError("the connection is not open")
    static let alreadyRunning = BrokerClientError(
        "run() was already called on this client: a second run would open a second connection and repeat every event", kind: .alreadyRunning)
}
