import BrokerProtocol
import Foundation
import Synchronization

@testable import BrokerTestSupport
@testable import LocationBroker

/// A clock the test moves by hand, in milliseconds since the Unix epoch.
final class ManualClock: Sendable {
    private let value: Mutex<Int64>

    init(start: Int64) { value = Mutex(start) }

    var now: Int64 { value.withLock { $0 } }

    func advance(by milliseconds: Int64) { value.withLock { $0 += milliseconds } }
}

/// Reads what the hub queued for a connection, without a socket.
struct OutboxReader {
    let outbox: Outbox

    init(_ outbox: Outbox) { self.outbox = outbox }

    /// The queued frames, decoded; a close request is reported as an error frame with code `unavailable`.
    func frames() throws -> [ServerFrame] {
        try outbox.takeQueued().map { entry in
            if let close = entry.close {
                return .error(.init(re: nil, code: .unavailable, message: "close \(close.code) \(close.reason)"))
            }
            return try WireJSON.decodeServerFrame(Array(TextFrame.payload(of: entry.frame).readableBytesView))
        }
    }
}
