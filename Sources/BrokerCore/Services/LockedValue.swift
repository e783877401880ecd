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
/// (macOS 13, iOS 16: `Mutex` needs macOS 15, iOS 18), it is NIO's `NIOLock` (`os_unfair_lock` there) over a box.
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
    @usableFromInline let lock = NIOLock()
    @usableFromInline let storage: Storage

    /// The value, reached only under `lock`.
    @usableFromInline final class Storage: @unchecked Sendable {
        @usableFromInline var value: Value

        init(_ value: Value) {
            self.value = value
        }
    }
    #endif

    /// A lock around `value`.
    public init(_ value: Value) {
        #if os(Linux)
        mutex = Mutex(value)
        #else
        storage = Storage(value)
        #endif
    }

    /// Runs `body` with the value, under the lock. `Mutex.withLock`'s own signature, so that `body` is handed to it
    /// as it is and inlined into the caller (a closure wrapped in another one was called as a separate function).
    @inlinable @inline(__always)
    public borrowing func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if os(Linux)
        try mutex.withLock(body)
        #else
        lock.lock()
        defer { lock.unlock() }
        return try body(&storage.value)
        #endif
    }
}
