import Foundation

/// The wall clock the core reads, in milliseconds since the Unix epoch: given to the parts that need it, so
/// tests move time by hand.
package struct WallClock: Sendable {
    private let read: @Sendable () -> Int64

    /// A clock that reads `read`.
    package init(_ read: @escaping @Sendable () -> Int64) {
        self.read = read
    }

    /// The system's clock.
    package static let system = WallClock { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// Milliseconds since the Unix epoch.
    package func now() -> Int64 { read() }
}
