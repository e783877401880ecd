import BrokerProtocol
import NIOConcurrencyHelpers

/// What the volunteer side knows about each donation of the fleet, for the donor side to check against:
/// when it was trackable, which positions the broker kept, and when each fix was sent.
///
/// Shared by a volunteer's task and its donor's task; every access is a short critical section.
public final class DonationLedger: Sendable {
    struct Entry {
        var home: GeoPoint
        var institution: GeoPoint
        var windows: [DeliveryChecker.Window] = []
        var kept: [DeliveryChecker.Kept] = []
        var reached: Set<Destination> = []
        /// Fix timestamp (ms) -> when it was handed to the socket, for latency finer than a millisecond.
        var sentAt: [Int64: ContinuousClock.Instant] = [:]
        var sentOrder: [Int64] = []
    }

    /// How many send times are remembered per donation; older ones are forgotten.
    static let sendTimesKept = 512
    private let entries = NIOLockedValueBox<[String: Entry]>([:])

    public init() {}

    /// Starts the record of a donation.
    public func open(_ donation: String, home: GeoPoint, institution: GeoPoint) {
        entries.withLockedValue { $0[donation] = Entry(home: home, institution: institution) }
    }

    /// Forgets a donation whose donor is done.
    public func close(_ donation: String) {
        _ = entries.withLockedValue { $0.removeValue(forKey: donation) }
    }

    /// The donation is about to enter a trackable state (the `PUT` is being sent at `time`).
    public func trackingStarts(_ donation: String, at time: Int64) {
        entries.withLockedValue { entries in
            guard entries[donation]?.windows.last.map({ $0.end != nil }) ?? true else { return }
            entries[donation]?.windows.append(.init(start: time, end: nil))
        }
    }

    /// The donation is about to leave its trackable state (the `PUT` is being sent at `time`).
    public func trackingEnding(_ donation: String, at time: Int64) {
        entries.withLockedValue { entries in
            guard let count = entries[donation]?.windows.count, count > 0, entries[donation]?.windows[count - 1].end == nil else { return }
            entries[donation]?.windows[count - 1].endSent = time
        }
    }

    /// The donation left its trackable state (the `PUT` was answered at `time`).
    public func trackingEnds(_ donation: String, at time: Int64) {
        entries.withLockedValue { entries in
            guard let count = entries[donation]?.windows.count, count > 0, entries[donation]?.windows[count - 1].end == nil else { return }
            entries[donation]?.windows[count - 1].end = time
            if entries[donation]?.windows[count - 1].endSent == nil { entries[donation]?.windows[count - 1].endSent = time }
        }
    }

    /// A fix kept while heading to `destination` was inside the arrival radius: the broker must announce it.
    public func reached(_ donation: String, _ destination: Destination) {
        entries.withLockedValue { _ = $0[donation]?.reached.insert(destination) }
    }

    /// A fix is being sent now.
    public func sent(_ donation: String, timestamp: Int64, at instant: ContinuousClock.Instant) {
        entries.withLockedValue { entries in
            guard var entry = entries[donation] else { return }
            entries[donation] = nil  // keeps the entry uniquely referenced while it changes
            entry.sentAt[timestamp] = instant
            entry.sentOrder.append(timestamp)
            if entry.sentOrder.count > Self.sendTimesKept {
                let dropped = entry.sentOrder.removeFirst()
                entry.sentAt[dropped] = nil
            }
            entries[donation] = entry
        }
    }

    /// The broker kept the fix of this donation taken at `timestamp`, in its current window.
    public func kept(_ donation: String, timestamp: Int64) {
        entries.withLockedValue { entries in
            guard let window = entries[donation]?.windows.count, window > 0 else { return }
            entries[donation]?.kept.append(.init(timestamp: timestamp, window: window - 1))
        }
    }

    /// When the fix with this timestamp was sent, if it is remembered.
    public func sendTime(_ donation: String, timestamp: Int64) -> ContinuousClock.Instant? {
        entries.withLockedValue { $0[donation]?.sentAt[timestamp] }
    }

    /// The donation's home and institution.
    public func places(_ donation: String) -> (home: GeoPoint, institution: GeoPoint)? {
        entries.withLockedValue { entries in entries[donation].map { ($0.home, $0.institution) } }
    }

    /// Everything the final check needs.
    public func facts(_ donation: String) -> (windows: [DeliveryChecker.Window], kept: [DeliveryChecker.Kept], reached: Set<Destination>) {
        entries.withLockedValue { entries in
            guard let entry = entries[donation] else { return ([], [], []) }
            return (entry.windows, entry.kept, entry.reached)
        }
    }
}
