import NIOCore
import Synchronization

/// The socket drains one event loop owes, run together in one event-loop task.
///
/// A position for 1,000 donors would otherwise cost 1,000 `execute` calls, each a closure and, across
/// threads, a wake-up; gathered here it costs one per event loop, as in a bare NIO fan-out. A writer is listed
/// at most once at a time (its outbox remembers that a drain is scheduled), so drains keep their order.
final class LoopDrains: Sendable {
    private struct Lists {
        var pending: [SocketWriter] = []
        /// The previous run's array, emptied, kept so that steady traffic allocates nothing.
        var spare: [SocketWriter] = []
    }

    private let eventLoop: any EventLoop
    private let lists = Mutex(Lists())

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Asks for `writer` to drain on this loop soon (from any thread).
    func schedule(_ writer: SocketWriter) {
        let first = lists.withLock { lists -> Bool in
            lists.pending.append(writer)
            return lists.pending.count == 1
        }
        if first { eventLoop.execute { self.run() } }
    }

    private func run() {
        var writers = lists.withLock { lists -> [SocketWriter] in
            var taken = lists.spare
            lists.spare = []
            swap(&taken, &lists.pending)
            return taken
        }
        for writer in writers { writer.drain() }
        writers.removeAll(keepingCapacity: true)
        lists.withLock { $0.spare = writers }
    }
}

/// One ``LoopDrains`` per event loop, found when a connection is opened.
final class LoopDrainRegistry: Sendable {
    private let byLoop = Mutex<[ObjectIdentifier: LoopDrains]>([:])

    init() {}

    /// The drains of `eventLoop`, made the first time it is asked for.
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
