import BrokerCore
import Synchronization

/// A wall clock the test moves by hand, in milliseconds since the Unix epoch.
final class ManualClock: Sendable {
    private let value: Mutex<Int64>

    init(start: Int64) { value = Mutex(start) }

    var now: Int64 { value.withLock { $0 } }

    func advance(by milliseconds: Int64) { value.withLock { $0 += milliseconds } }

    /// The clock as the core takes it.
    var wallClock: WallClock { WallClock { self.now } }
}
