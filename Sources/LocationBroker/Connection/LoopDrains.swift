import BrokerCore
import NIOCore
import Synchronization

/// The socket drains one event loop owes, run together in one event-loop task; and the loop's other shared
/// per-connection work, its WebSockets' heartbeat and close-grace timers (``ConnectionTimers``, one scheduled task
/// per list instead of one per connection).
///
/// A position for 1,000 donors would otherwise cost 1,000 `execute` calls, each a closure and, across
/// threads, a wake-up; gathered here it costs one per event loop, as in a bare NIO fan-out. An outbox is listed
/// at most once at a time (it remembers that a drain is scheduled), so drains keep their order. The lists hold
/// an outbox only from its schedule to its drain. Its lock is a leaf, taken after the outbox's is released
/// (docs/LOCK-ORDER.md).
final class LoopDrains: Sendable {
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
    private let lists = Mutex(Lists())
    /// The heartbeats of the loop's WebSockets: one scheduled task for all of them (``ConnectionTimers``).
    let heartbeats: NIOLoopBound<ConnectionTimers<WebSocketConnectionHandler>>
    /// The close graces of the loop's WebSockets, apart from the heartbeats: each list's deadlines are then placed
    /// at its end.
    let closeGraces: NIOLoopBound<ConnectionTimers<WebSocketConnectionHandler>>

    /// Made on `eventLoop`.
    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
        heartbeats = NIOLoopBound(ConnectionTimers(eventLoop: eventLoop), eventLoop: eventLoop)
        closeGraces = NIOLoopBound(ConnectionTimers(eventLoop: eventLoop), eventLoop: eventLoop)
    }

    /// Asks for `outbox` to drain through `writer` on this loop soon (from any thread).
    func schedule(_ outbox: Outbox, through writer: SocketWriter) {
        let first = lists.withLock { lists -> Bool in
            lists.pending.append(Pending(outbox: outbox, writer: writer))
            return lists.pending.count == 1
        }
        if first { eventLoop.execute { self.run() } }
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
final class LoopDrainRegistry: Sendable {
    private let byLoop = Mutex<[ObjectIdentifier: LoopDrains]>([:])

    init() {}

    /// The drains of `eventLoop`, made the first time it is asked for. On `eventLoop` only.
    func drains(for eventLoop: any EventLoop) -> LoopDrains {
        byLoop.withLock { byLoop in
            let key = ObjectIdentifier(eventLoop)
            if let drains = byLoop[key] { return drains }
            let drains = LoopDrains(eventLoop: eventLoop)
            byLoop[key] = drains
            return drains
        }
    }
}
