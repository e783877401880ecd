import BrokerCore
import NIOConcurrencyHelpers

/// A wall clock the test moves by hand, in milliseconds since the Unix epoch.
final class ManualClock: Sendable {
    private let value: NIOLockedValueBox<Int64>

    init(start: Int64) { value = NIOLockedValueBox(start) }

    var now: Int64 { value.withLockedValue { $0 } }

    func advance(by milliseconds: Int64) { value.withLockedValue { $0 += milliseconds } }

    /// The clock as the core takes it.
    var wallClock: WallClock { WallClock { self.now } }
}
