import BrokerCore
import Logging

/// Where a ``WebSocketConnectionHandler`` is in its life, and what it keeps in each phase.
extension WebSocketConnectionHandler {
    /// What the handler needs only until the connection is open.
    final class Opening {
        let identity: VerifiedIdentity
        let logger: Logger

        init(identity: VerifiedIdentity, logger: Logger) {
            self.identity = identity
            self.logger = logger
        }
    }

    /// Where the handler is in its life.
    enum Phase {
        /// Added to the pipeline, not serving yet.
        case opening(Opening)
        /// Serving the connection; the outbox is its sink: the hub writes to it, and so does this handler (pongs,
        /// pings, closes).
        case serving(ClientConnection, Outbox)
        /// The socket is gone; the connection is kept for its logger.
        case ended(ClientConnection)
    }
}
