/// Where the hub writes one connection's frames, as centrifuge's hub writes to its `transport.go`: the hub
/// knows no socket, no WebSocket type and no event loop, only this.
///
/// Every method is called from any thread, often under a hub shard lock (docs/LOCK-ORDER.md): it must not
/// wait, and may take only locks that come after a shard lock.
package protocol FrameSink: AnyObject, Sendable {
    /// Queues `frame` without waiting. `conflationKey` names the frames that may replace one another in a full
    /// queue (a volunteer channel's positions); `nil` for a frame that must not be replaced.
    func enqueue(_ frame: PreparedFrame, conflationKey: String?) -> EnqueueResult
    /// Drops the queued frames, not yet sent, with this conflation key (a donation stopped being trackable:
    /// its channel's positions may not reach the donor any more).
    func discardQueued(conflationKey: String)
    /// Asks for the connection to close with `code` and `reason`: after the frames already queued, or with
    /// `discardPending`, instead of them. Nothing queued later is sent.
    func close(code: UInt16, reason: String, discardPending: Bool)
    /// Cuts the connection without a close handshake (the end of the shutdown grace).
    func abort()
    /// Stops the sink for good (the connection is over): queued frames are dropped, and later ones too.
    func finish()
    /// Whether a close was asked for, or the connection is over.
    var isClosing: Bool { get }
    /// Bytes queued now, for operations and tests.
    var queuedBytes: Int { get }
}

/// What became of an enqueued frame.
package enum EnqueueResult: Sendable, Equatable {
    /// Queued behind the others.
    case queued
    /// Replaced an older frame with the same conflation key.
    case conflated
    /// The consumer is too slow: the connection is now closing with 4008.
    case overflowed
    /// The connection is closing or closed; the frame was dropped.
    case closed

    /// Whether the frame will reach the client (unless the connection fails meanwhile).
    package var isDelivered: Bool { self == .queued || self == .conflated }
}
