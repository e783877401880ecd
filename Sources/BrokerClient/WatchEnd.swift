import BrokerProtocol

/// Why watching a donation ended: the one list the client library (`DonationWatcher.End`) and the terminal
/// watcher (its exit codes and words, in WatchRendering) share.
public enum WatchEnd: Sendable, Equatable {
    /// The broker ended the subscription: delivered, cancelled, volunteer changed (access revoked), deleted, or on
    /// request.
    case unsubscribed(ServerFrame.UnsubscribeReason)
    /// The first subscribe was refused (forbidden, not-found, not-trackable...).
    case refused(ErrorCode, message: String)
    /// A subscribe after a reconnect was refused: the donation most likely ended while the connection was down.
    case refusedAfterReconnect(ErrorCode, message: String)
    /// The broker refused the token, even a fresh one.
    case unauthorized(String)
    /// No connection could be made and the policy says to stop (a wrong address, or a client bug the broker
    /// closed the connection for).
    case connectionFailed(String)
    /// The watcher was stopped: its task was cancelled, or the donor pressed Ctrl-C.
    case stopped
}
