#if os(Linux)
import Synchronization
#else
import NIOConcurrencyHelpers
#endif

/// A value behind a lock, for the broker's shared state: the outboxes, the channel registry, the gates.
///
/// On Linux, where the broker runs, it is Synchronization's `Mutex`, stored inline in its owner: one
/// compare-and-swap to take it and one to give it back, no allocation of its own. NIO's `NIOLockedValueBox`
/// costs a `pthread_mutex_t` behind a separate allocation, about four times the instructions per lock and unlock;
/// the fan-out takes two locks per delivery. On Apple platforms, where the package must build at its floors
/// (macOS 13, iOS 16: `Mutex` needs macOS 15, iOS 18), it is `NIOLockedValueBox`, whose lock is
/// `os_unfair_lock` there.
///
/// Not copyable: its owner holds it as a `let`. Not reentrant: `body` must not take the same lock again.
///
/// Public, not `package`: Swift 6.3 inlines and specializes an `@inlinable` generic in another module only when it
/// is public; a `package` one is called unspecialized, each lock looking up its generic metadata (twenty times the
/// instructions of the lock itself).
public struct LockedValue<Value: Sendable>: ~Copyable, Sendable {
    #if os(Linux)
    @usableFromInline let mutex: Mutex<Value>
    #else
    @usableFromInline let box: NIOLockedValueBox<Value>
    #endif

    /// A lock around `value`.
    public init(_ value: Value) {
        #if os(Linux)
        mutex = Mutex(value)
        #else
        box = NIOLockedValueBox(value)
        #endif
    }

    /// Runs `body` with the value, under the lock. Always inlined, so that `body` is inlined into its caller too.
    @inlinable @inline(__always)
    public borrowing func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        #if os(Linux)
        try mutex.withLock { value throws -> Result in try body(&value) }
        #else
        try box.withLockedValue(body)
        #endif
    }
}
