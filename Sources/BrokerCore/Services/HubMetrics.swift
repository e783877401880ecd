import BrokerProtocol

/// What the core counts. The core reports; the broker's Prometheus registry (`BrokerMetrics`) adapts.
///
/// On the publish path one call is made per publish, with the fan-out's tallies, never one per subscriber.
package protocol HubMetrics: Sendable {
    /// A connection was registered; `admitted` is false when it was over the per-identity limit.
    func connectionOpened(admitted: Bool)
    /// A registered connection was forgotten.
    func connectionClosed()
    /// A request was refused with `code`.
    func rejected(_ code: ErrorCode)
    /// A position was kept for nobody, for `reason`.
    func untracked(_ reason: ServerFrame.UntrackedReason)
    /// A position was kept and fanned out: `fanOut` says what became of its deliveries.
    func kept(_ fanOut: FanOutTally)
    /// One frame other than a position was queued for one connection.
    func queued(_ result: EnqueueResult)
}

/// What became of one position's deliveries, counted in the fan-out loop and reported once.
package struct FanOutTally: Sendable, Equatable {
    /// Queued or conflated: will reach the donor.
    package var delivered = 0
    package var conflated = 0
    /// Deliveries that found the queue full: the connection is now closing with 4008.
    package var overflowed = 0

    package init() {}

    /// Counts one delivery's result.
    package mutating func count(_ result: EnqueueResult) {
        switch result {
        case .queued: delivered += 1
        case .conflated:
            delivered += 1
            conflated += 1
        case .overflowed: overflowed += 1
        case .closed: break
        }
    }
}
