import BrokerClient
import BrokerProtocol
/// Where the watcher's link to the broker stands, as the header shows it.
public enum ConnectionStatus: Sendable, Equatable {
    /// Opening the WebSocket.
    case connecting
    /// Connected; waiting for the answer to `subscribe`.
    case subscribing
    /// Subscribed: updates arrive as they happen.
    case live
    /// The connection was lost or could not be opened; the next attempt is at `at` (milliseconds since the epoch).
    case retrying(attempt: Int, at: Int64, reason: String)
    /// Connected, but the donation is not trackable right now; asking again at `at`.
    case waitingToResubscribe(at: Int64)
    /// This device has no network: no attempt until it comes back.
    case noNetwork
    /// Watching is over.
    case closed
}

/// What happened to the link, reported by whoever runs the connection.
public enum LinkEvent: Sendable, Equatable {
    /// Opening a connection.
    case connecting
    /// An open connection ended; a reconnect follows.
    case lost(reason: String)
    /// The next attempt to connect is scheduled.
    case retrying(attempt: Int, at: Int64, reason: String)
    /// Connected again and subscribing again, asking for positions after `since`.
    case resubscribing(since: Int64?)
    /// A subscribe after a reconnect was answered `not-trackable`: the trip is paused; asking again at `retryAt`.
    case notTrackable(message: String, retryAt: Int64)
    /// Watching ended for a reason that is not a frame (refusal, no connection, Ctrl-C).
    case ended(WatchEnd)
}
