#if canImport(Network)
import Dispatch
import Network
import NIOConcurrencyHelpers

/// Follows the system's network path (`NWPathMonitor`) and tells clients when it goes away and comes back, so an
/// app need not wire this itself. Keep it while the clients run; ``cancel()`` (or releasing it) stops it.
///
/// Compiled on Apple platforms only; it was not built on the Linux machine the library is tested on.
@available(iOS 16, macOS 13, *)
public final class NetworkPathFollower: Sendable {
    /// `NWPathMonitor` may be cancelled from any thread (its handler runs on its own queue); the box only makes the
    /// type say so to the compiler.
    private final class Handle: @unchecked Sendable {
        let monitor: NWPathMonitor
        init(_ monitor: NWPathMonitor) { self.monitor = monitor }
    }

    private let handle: Handle

    /// Starts following the path for `clients`.
    public init(_ clients: [any ConnectivityHooks]) {
        let monitor = NWPathMonitor()
        let satisfied = NIOLockedValueBox<Bool?>(nil)
        monitor.pathUpdateHandler = { path in
            let now = path.status == .satisfied
            let before = satisfied.withLockedValue { old -> Bool? in
                defer { old = now }
                return old
            }
            // The first report only says how things stand; a change of interface counts as the network coming back.
            if now {
                if before != nil { clients.forEach { $0.networkAvailable() } }
            } else {
                clients.forEach { $0.networkLost() }
            }
        }
        monitor.start(queue: DispatchQueue(label: "broker-client.path-monitor"))
        handle = Handle(monitor)
    }

    /// Stops following the path.
    public func cancel() {
        handle.monitor.cancel()
    }

    deinit {
        cancel()
    }
}
#endif
