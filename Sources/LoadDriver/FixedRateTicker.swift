import NIOCore

/// Runs a body on one event loop at fixed-rate deadlines: the first deadline, then every `period` after it,
/// whenever the previous run actually happened.
///
/// A bench publisher must send at its rate and keep its place in the period. NIO's `scheduleRepeatedTask` waits
/// `delay` after each run instead, so every late wake-up (a busy loop, timer slack) shifts all of a publisher's
/// later sends; publishers drift by different amounts and bunch up. Measured on this machine (pairs, 1,000
/// publishers at 5,000/s in all, 20 s): the busiest millisecond held 10 sends in the first second and 23 to 35
/// by the eighteenth, and the run's p99 grew with it, for the broker and the baseline alike. Here a late run is
/// followed by the next deadline of the schedule, so lateness never accumulates; only after a stall of more than
/// a whole period does the schedule restart from now, rather than send the missed ticks in a burst.
final class FixedRateTicker: Sendable {
    private struct State {
        var next: NIODeadline
        var scheduled: Scheduled<Void>?
        var cancelled = false
    }

    private let eventLoop: any EventLoop
    private let period: TimeAmount
    private let state: NIOLoopBoundBox<State>
    private let body: @Sendable (FixedRateTicker) -> Void

    /// Starts ticking: `body` runs at `first`, then every `period`. Call on `eventLoop` or from anywhere.
    /// - Parameter body: given the ticker, so that it can ``cancel()`` itself (on the loop, it takes effect at once).
    static func start(
        on eventLoop: any EventLoop, first: NIODeadline, period: TimeAmount, _ body: @escaping @Sendable (FixedRateTicker) -> Void
    ) -> FixedRateTicker {
        let ticker = FixedRateTicker(eventLoop: eventLoop, first: first, period: period, body: body)
        eventLoop.execute { ticker.scheduleNext() }
        return ticker
    }

    private init(eventLoop: any EventLoop, first: NIODeadline, period: TimeAmount, body: @escaping @Sendable (FixedRateTicker) -> Void) {
        precondition(period.nanoseconds > 0, "a fixed-rate ticker needs a positive period")
        self.eventLoop = eventLoop
        self.period = period
        self.body = body
        state = NIOLoopBoundBox.makeBoxSendingValue(State(next: first), eventLoop: eventLoop)
    }

    /// Stops the ticks: no run starts after this takes effect (at once on the loop, else as soon as the loop
    /// takes the request).
    func cancel() {
        guard eventLoop.inEventLoop else {
            eventLoop.execute { [self] in cancel() }
            return
        }
        state.value.cancelled = true
        state.value.scheduled?.cancel()
        state.value.scheduled = nil
    }

    private func scheduleNext() {
        guard !state.value.cancelled else { return }
        state.value.scheduled = eventLoop.scheduleTask(deadline: state.value.next) { [self] in tick() }
    }

    private func tick() {
        guard !state.value.cancelled else { return }
        body(self)
        var next = state.value.next + period
        // Behind by more than a whole period (the loop stalled): start again from now instead of catching up.
        let now = eventLoop.now
        if next + period < now { next = now }
        state.value.next = next
        scheduleNext()
    }
}
