import NIOConcurrencyHelpers

/// The fleet's counters, shared by every volunteer and donor task.
public final class FleetStats: Sendable {
    /// A copy of the counters at one moment.
    public struct Snapshot: Sendable, Equatable, Codable {
        public var volunteersOnline = 0
        public var donorsOnline = 0
        public var published = 0
        public var kept = 0
        public var rateLimited = 0
        public var deliveries = 0
        /// Positions received in a `since` backlog after a reconnect.
        public var recovered = 0
        public var lost = 0
        public var created = 0
        public var delivered = 0
        public var cancelled = 0
        public var dropped = 0
        public var deleted = 0
        public var arrivals = 0
        public var reconnects = 0
        public var errors = 0
        /// The errors by kind (``FleetStats/kind(of:)``), so a long run says what went wrong, not only how often.
        public var errorKinds: [String: Int] = [:]
        public var latency = LatencySummary()

        public init() {}
    }

    private struct State {
        var counters = Snapshot()
        var histogram = LatencyHistogram()
        var firstErrors: [String] = []
    }

    private let state = NIOLockedValueBox(State())
    /// How many error messages are kept for the summary.
    public static let errorsKept = 20

    public init() {}

    /// Changes counters.
    public func update(_ change: (inout Snapshot) -> Void) {
        state.withLockedValue { change(&$0.counters) }
    }

    /// Records one delivery and its latency.
    public func delivered(latencyMicroseconds: Int64) {
        state.withLockedValue {
            $0.counters.deliveries += 1
            $0.histogram.record(microseconds: latencyMicroseconds)
        }
    }

    /// Counts an error and keeps its message if there is room.
    public func error(_ message: String) {
        state.withLockedValue {
            $0.counters.errors += 1
            $0.counters.errorKinds[Self.kind(of: message), default: 0] += 1
            if $0.firstErrors.count < Self.errorsKept { $0.firstErrors.append(message) }
        }
    }

    /// An error message without what names one donation or volunteer: "donor of fleet-a1-7-2: connection failed: X"
    /// is of kind "donor: connection failed: X"; numbers become `#`.
    public static func kind(of message: String) -> String {
        var text = Substring(message)
        for (prefix, who) in [("donor of ", "donor"), ("volunteer ", "volunteer"), ("PUT ", "PUT"), ("DELETE ", "DELETE")] where text.hasPrefix(prefix) {
            // The subject ends at whichever comes first after the prefix: ": " or " ".
            let rest = text.dropFirst(prefix.count)
            let end = [rest.range(of: ": ")?.lowerBound, rest.firstIndex(of: " ")].compactMap { $0 }.min() ?? rest.endIndex
            text = Substring(who) + rest[end...]
            break
        }
        var kind = ""
        var inNumber = false
        for character in text.prefix(100) {
            if character.isNumber {
                if !inNumber { kind.append("#") }
                inNumber = true
            } else {
                kind.append(character)
                inNumber = false
            }
        }
        return kind
    }

    /// The counters now, with the latency percentiles so far.
    public func snapshot() -> Snapshot {
        state.withLockedValue {
            var copy = $0.counters
            copy.latency = $0.histogram.summary
            return copy
        }
    }

    /// The first error messages.
    public var errorMessages: [String] { state.withLockedValue { $0.firstErrors } }

    /// The latency histogram so far.
    public var histogram: LatencyHistogram { state.withLockedValue { $0.histogram } }
}
