import BrokerProtocol
import DequeModule

/// The policy of a connection's outbound queue, as a value: what is kept, what is conflated, when the consumer
/// is too slow, and how a close follows the frames. It reads no clock (the caller passes the instants) and takes
/// no lock (its owner holds one), so every rule is tested on its own (CoreTests' `OutboxQueueTests`).
///
/// Bounded in bytes. When a frame does not fit, the queued frame with the same conflation key is replaced by
/// the newer one (only a channel's newest position matters). The consumer is judged too slow, and a 4008 close
/// replaces everything queued, when a frame fits nowhere, or when nothing was taken for longer than the stall
/// limit while frames waited. A close is always the last thing queued: nothing is accepted after it.
package struct OutboxQueue: Sendable {
    /// A close the broker asked for.
    package struct Close: Sendable, Equatable {
        package var code: UInt16
        package var reason: String

        package init(code: UInt16, reason: String) {
            self.code = code
            self.reason = reason
        }
    }

    /// One queued frame.
    package struct Entry: Sendable {
        package var frame: PreparedFrame
        /// Frames with the same key may replace one another; `nil` for a frame that must not be replaced.
        package var conflationKey: String?
    }

    /// What a consumer takes at once: the frames in order, then the close if one followed them.
    package struct Taken: Sendable {
        package var entries: Deque<Entry> = []
        /// Nothing more is written after it.
        package var close: Close?

        package init(entries: Deque<Entry> = [], close: Close? = nil) {
            self.entries = entries
            self.close = close
        }
    }

    /// The most frames a queue storage may have held for it to be kept between takes (``take(into:)``,
    /// ``DrainBuffer``): a connection that is sent a frame now and then keeps one storage this small, never a
    /// burst's.
    package static let keptStorageEntries = 2

    /// The byte limit of queued frames.
    package let limit: Int
    /// How long frames may wait without being taken before the consumer is judged too slow.
    package let stallLimit: Duration
    private var entries = Deque<Entry>()
    private var pendingClose: Close?
    /// The most frames `entries`' storage has held since it was made: its capacity follows from it.
    private var storagePeak = 0
    /// Bytes queued now.
    package private(set) var bytes = 0
    /// A close is queued: nothing more is accepted.
    package private(set) var isClosing = false
    /// Nothing more will be taken: the close was taken, or the connection is gone.
    package private(set) var isFinished = false
    /// Since when frames have been waiting without being taken.
    private var stalledSince: ContinuousClock.Instant?

    package init(limit: Int, stallLimit: Duration) {
        self.limit = limit
        self.stallLimit = stallLimit
    }

    /// The most frames the queue's storage was grown to hold (0: it holds no storage): what an idle connection's
    /// outbox keeps between takes, at most ``keptStorageEntries``.
    package var storageFrames: Int { storagePeak }

    /// Whether frames or a close wait to be taken.
    package var hasWork: Bool { !entries.isEmpty || pendingClose != nil }

    /// Queues `frame` at `now`. The instant is read only when frames already wait (the stall rule needs it),
    /// so an empty queue, the usual case, costs no clock read.
    package mutating func enqueue(
        _ frame: PreparedFrame, conflationKey: String?, now: @autoclosure () -> ContinuousClock.Instant
    ) -> EnqueueResult {
        if isClosing || isFinished { return .closed }
        if !entries.isEmpty {
            let now = now()
            if let since = stalledSince {
                if now - since > stallLimit { return judgeSlow() }
            } else {
                stalledSince = now
            }
        }
        let size = frame.size
        if bytes + size <= limit {
            entries.append(Entry(frame: frame, conflationKey: conflationKey))
            storagePeak = max(storagePeak, entries.count)
            bytes += size
            return .queued
        }
        if let key = conflationKey,
            let index = entries.lastIndex(where: { $0.conflationKey == key }),
            bytes - entries[index].frame.size + size <= limit
        {
            bytes += size - entries[index].frame.size
            entries[index].frame = frame
            return .conflated
        }
        return judgeSlow()
    }

    /// Drops the queued frames with `conflationKey`.
    /// - Returns: how many were dropped.
    @discardableResult
    package mutating func discard(conflationKey: String) -> Int {
        let before = entries.count
        entries.removeAll { $0.conflationKey == conflationKey }
        guard entries.count != before else { return 0 }
        bytes = entries.reduce(0) { $0 + $1.frame.size }
        if entries.isEmpty { stalledSince = nil }
        return before - entries.count
    }

    /// Queues a close after the frames queued, or instead of them with `discardPending`.
    /// - Returns: `false` when a close was queued already or the queue is finished (nothing changes then).
    @discardableResult
    package mutating func close(code: UInt16, reason: String, discardPending: Bool) -> Bool {
        guard !isClosing && !isFinished else { return false }
        if discardPending {
            releaseStorage()
            bytes = 0
        }
        pendingClose = Close(code: code, reason: reason)
        isClosing = true
        return true
    }

    /// Takes everything queued; the stall clock starts again. Once the close is taken the queue is finished.
    package mutating func take() -> Taken {
        var buffer = DrainBuffer()
        let close = take(into: &buffer)
        return Taken(entries: buffer.frames, close: close)
    }

    /// Takes everything queued into `buffer` (a consumer's, reused from one take to the next, empty when it is
    /// passed); the stall clock starts again. Once the close is taken the queue is finished.
    ///
    /// The storages are swapped, not copied: the buffer receives the queue's with its frames, and the queue keeps
    /// the buffer's emptied one, which ``DrainBuffer/removeAll()`` keeps only when it is small. So a connection
    /// sent one frame at a time allocates and frees no storage per frame, and an idle connection holds
    /// at most a storage of ``keptStorageEntries`` frames.
    /// - Returns: the close that followed the frames, if one was queued.
    package mutating func take(into buffer: inout DrainBuffer) -> Close? {
        precondition(buffer.frames.isEmpty, "a drain buffer is emptied before it is reused")
        if !entries.isEmpty {
            swap(&buffer.frames, &entries)
            swap(&buffer.storagePeak, &storagePeak)
        }
        bytes = 0
        stalledSince = nil
        guard let close = pendingClose else { return nil }
        pendingClose = nil
        isFinished = true
        // Nothing is queued after the close: the storage goes too.
        releaseStorage()
        return close
    }

    /// Stops the queue for good: what is queued is dropped, and so is everything enqueued later.
    package mutating func finish() {
        isFinished = true
        releaseStorage()
        pendingClose = nil
        bytes = 0
        stalledSince = nil
    }

    /// Drops the queued frames and the storage that held them.
    private mutating func releaseStorage() {
        entries = Deque()
        storagePeak = 0
    }

    /// Queues a 4008 close in place of everything queued.
    private mutating func judgeSlow() -> EnqueueResult {
        close(code: CloseCode.slowConsumer, reason: "slow consumer: outbound queue full", discardPending: true)
        return .overflowed
    }
}
