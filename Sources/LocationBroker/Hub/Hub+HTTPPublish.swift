import BrokerProtocol
import Logging

extension Hub {
    /// Stands in for the sender of a publish that came over plain HTTP. Never registered with the hub.
    private static let httpSenderLogger = Logger(label: "location-broker.http-publish")

    /// Publishes a validated position on `identity`'s own channel for a client that holds no WebSocket, such
    /// as the OwnTracks app in HTTP mode.
    ///
    /// It takes the very path of a WebSocket publish (``publish(from:position:)``: rate limit, presence,
    /// `seq`, kept history, fan-out, arrival), which reads nothing of the sender but its identity. The sender
    /// is a detached ``ClientConnection`` that is never registered: it counts as no open socket, holds no
    /// subscription and is sent nothing, so presence changes only as a publish changes it (online with it,
    /// offline after the presence timeout) and the per-identity connection limit is untouched.
    /// - Parameter identity: a verified, canonical identity; the position goes on the channel of that name.
    func publish(as identity: String, position: Position) -> Result<PublishOutcome, BrokerError> {
        let sender = ClientConnection(id: 0, identity: identity, expiresAt: 0, outboxLimit: 0, logger: Self.httpSenderLogger)
        return publish(from: sender, position: position)
    }
}
