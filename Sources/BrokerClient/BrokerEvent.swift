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
    public let description: String

    public init(_ description: String) {
        self.description = description
    }

    static let notConnected = BrokerClientError("the connection is not open")
}
