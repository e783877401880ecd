import BrokerCore
import NIOCore

/// The socket drains one event loop owes, run together in one event-loop task; and the loop's other shared
/// per-connection work, its WebSockets' heartbeat and close-grace timers (``ConnectionTimers``, one scheduled task
/// per list instead of one per connection).
///
/// A position for 1,000 donors would otherwise cost 1,000 `execute` calls, each a closure and, across
/// threads, a wake-up; gathered here it costs one per event loop, as in a bare NIO fan-out. An outbox is listed
/// at most once at a time (it remembers that a drain is scheduled), so drains keep their order. The lists hold
/// an outbox only from its schedule to its drain. Its lock is a leaf, taken after the outbox's is released
/// (docs/LOCK-ORDER.md).
///
/// While one of the loop's connections handles a frame (``readBegan()`` ... ``readEnded()``), drains asked for on
/// the loop itself wait for the end of that frame instead of an `execute`: a position for a donor served by the
/// volunteer's own loop is written as soon as the volunteer's frame is handled, as a bare NIO server writes it
/// from its read, not after every other socket the loop found readable (waiting for those sets the latency tail
/// of a volunteer and donor on one loop), and without a task. The drains still run after the hub call that asked
/// for them returned, never inside it (no socket is written under a hub or outbox lock).
package final class LoopDrains: Sendable {
    /// An outbox to drain, with the writer it drains through.
    private struct Pending {
        let outbox: Outbox
        let writer: SocketWriter
    }

    private struct Lists {
        var pending: [Pending] = []
        /// The previous run's array, emptied, kept so that steady traffic allocates nothing.
        var spare: [Pending] = []
        /// The buffer the loop's drains take their frames into, emptied between them (``SocketWriter/drain(_:reusing:)``).
        var buffer = DrainBuffer()
    }

    private let eventLoop: any EventLoop
    private let lists = LockedValue(Lists())
    /// The heartbeats of the loop's WebSockets: one scheduled task for all of them (``ConnectionTimers``).
    let heartbeats: NIOLoopBound<ConnectionTimers<WebSocketConnectionHandler>>
    /// The close graces of the loop's WebSockets, apart from the heartbeats: each list's deadlines are then placed
    /// at its end.
    let closeGraces: NIOLoopBound<ConnectionTimers<WebSocketConnectionHandler>>

    /// How deep the loop is in its connections' frames (``readBegan()``), and whether drains were left for the
    /// end of the outermost one.
    ///
    /// `nonisolated(unsafe)`: only the loop's own thread touches it, so no two accesses can race.
    /// ``readBegan()`` and ``readEnded()`` are called on the loop only and assert it (debug builds, as NIO checks
    /// its own per-loop state); ``schedule(_:through:)`` touches it only once `eventLoop.inEventLoop` said it runs
    /// there (in every build). No access spans a call: ``readEnded()`` drains after its own accesses end. A
    /// `NIOLoopBoundBox` would check the thread in every build, twice per frame read (docs/BENCHMARKS.md,
    /// "Decisions that shaped the hot path").
    nonisolated(unsafe) private var reads = Reads()

    private struct Reads {
        var depth = 0
        var drainOwed = false
    }

    /// What the loop's writers count. Held here, once per loop, rather than by each connection's writer, which
    /// every idle connection would carry.
    private let metrics: any WebSocketMetrics

    /// Made on `eventLoop`.
    init(eventLoop: any EventLoop, metrics: any WebSocketMetrics) {
        self.eventLoop = eventLoop
        self.metrics = metrics
        heartbeats = NIOLoopBound(ConnectionTimers(eventLoop: eventLoop), eventLoop: eventLoop)
        closeGraces = NIOLoopBound(ConnectionTimers(eventLoop: eventLoop), eventLoop: eventLoop)
    }

    /// Counts `count` frames handed to one socket in one write.
    func countWritten(_ count: Int) {
        metrics.framesWritten(count)
    }

    /// Asks for `outbox` to drain through `writer` on this loop soon (from any thread).
    func schedule(_ outbox: Outbox, through writer: SocketWriter) {
        let first = lists.withLock { lists -> Bool in
            lists.pending.append(Pending(outbox: outbox, writer: writer))
            return lists.pending.count == 1
        }
        guard first else { return }
        if eventLoop.inEventLoop, reads.depth > 0 {
            reads.drainOwed = true
        } else {
            eventLoop.execute { self.run() }
        }
    }

    /// One of the loop's connections starts handling a frame: drains asked for on the loop until
    /// ``readEnded()`` run then, not in a task of their own. On the loop only; always paired with ``readEnded()``.
    func readBegan() {
        eventLoop.assertInEventLoop()
        reads.depth += 1
    }

    /// The frame is handled: the drains it asked for (a donor's position, the sender's answer) run now.
    func readEnded() {
        eventLoop.assertInEventLoop()
        reads.depth -= 1
        guard reads.depth == 0, reads.drainOwed else { return }
        reads.drainOwed = false
        run()
    }

    /// Runs `body` on the loop as a frame's handling runs (``readBegan()`` ... ``readEnded()``): the drains it
    /// asks for on this loop run as it returns, not in a task of their own.
    func drainingWhenDone(_ body: () -> Void) {
        readBegan()
        body()
        readEnded()
    }

    private func run() {
        var (drains, buffer) = lists.withLock { lists -> ([Pending], DrainBuffer) in
            var taken = lists.spare
            lists.spare = []
            swap(&taken, &lists.pending)
            var buffer = DrainBuffer()
            swap(&buffer, &lists.buffer)
            return (taken, buffer)
        }
        for pending in drains { pending.writer.drain(pending.outbox, reusing: &buffer) }
        drains.removeAll(keepingCapacity: true)
        lists.withLock {
            $0.spare = drains
            $0.buffer = buffer
        }
    }
}

/// One ``LoopDrains`` per event loop, found when a connection is opened (on its loop).
package final class LoopDrainRegistry: Sendable {
    private let byLoop = LockedValue<[ObjectIdentifier: LoopDrains]>([:])
    private let metrics: any WebSocketMetrics

    init(metrics: any WebSocketMetrics) {
        self.metrics = metrics
    }

    /// The drains of `eventLoop`, made the first time it is asked for. On `eventLoop` only.
    func drains(for eventLoop: any EventLoop) -> LoopDrains {
        byLoop.withLock { byLoop in
            let key = ObjectIdentifier(eventLoop)
            if let drains = byLoop[key] { return drains }
            let drains = LoopDrains(eventLoop: eventLoop, metrics: metrics)
            byLoop[key] = drains
            return drains
        }
    }
}
