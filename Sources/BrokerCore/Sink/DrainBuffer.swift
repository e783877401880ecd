import DequeModule

/// The buffer a consumer takes an outbox's frames into (``OutboxQueue/take(into:)``), reused from one take to the
/// next: one per event loop in the broker.
///
/// A take swaps storages instead of making one: the buffer receives the queue's storage with its frames, and the
/// queue receives the buffer's emptied one for its next frames. So a connection sent one frame at a time neither
/// allocates nor frees queue storage per delivery. Only small storages go round: ``removeAll()``
/// lets go of one that ever held more than ``OutboxQueue/keptStorageEntries`` frames, so the storage a queue
/// receives, and so what an idle connection keeps, is at most that small.
package struct DrainBuffer: Sendable {
    /// The frames taken, in order.
    package internal(set) var frames = Deque<OutboxQueue.Entry>()
    /// The most frames `frames`' storage has held since it was made (its capacity follows from it).
    var storagePeak = 0

    package init() {}

    /// Empties the buffer once its frames are written, keeping its storage only when it is small.
    package mutating func removeAll() {
        if storagePeak <= OutboxQueue.keptStorageEntries {
            // Popped one by one (at most ``OutboxQueue/keptStorageEntries``), which keeps the storage: each frame is
            // destroyed by the code specialized for it, where `removeAll(keepingCapacity:)` hands the run to the
            // runtime's generic destroy, paid on every delivery otherwise. An empty Deque may hold the
            // shared empty singleton, which popping leaves alone.
            while frames.popFirst() != nil {}
        } else {
            frames = Deque()
            storagePeak = 0
        }
    }
}
