/// What an app tells a client about the device, so it does not learn of a new network by waiting for a dead
/// connection to time out: ``DonationWatcher`` and ``VolunteerPublisher`` take these, and on Apple platforms
/// ``NetworkPathFollower`` calls the first two from the system's path monitor.
public protocol ConnectivityHooks: Sendable {
    /// The device has no network: the connection is dropped, and no attempt and no token call is made until
    /// ``networkAvailable()``.
    func networkLost()
    /// The network is back (or changed): an attempt at once (at most one every
    /// ``ConnectionStateMachine/Policy/minimumAttemptGap``), and an open connection silent for longer than
    /// ``ConnectionStateMachine/Policy/silenceBeforeReplacing`` is replaced.
    func networkAvailable()
    /// The app came to the foreground: as ``networkAvailable()`` for an open connection gone silent or a pending
    /// retry.
    func appEnteredForeground()
    /// Drops the connection, if any, and connects again at once (within the attempt gap).
    func reconnectNow()
}
