import BrokerProtocol

/// The fixes a ``VolunteerPublisher`` was handed and has not seen acknowledged: a value type with no I/O, kept
/// under the publisher's lock, so each rule is tested without sockets.
///
/// - A fix sent on the current connection stays here until its `ack` or `error` (matched by `re`).
/// - When the connection ends, the newest fix not acknowledged is kept to send on the next one; every older one
///   is superseded. An older fix is never sent after a newer one.
/// - While disconnected only the newest fix waits: a newer one supersedes it.
///
/// Generic over the connection (a ``BrokerConnection`` in the publisher), so tests need no socket.
struct FixOutbox<Connection: Sendable>: Sendable {
    typealias FixOutcome = VolunteerPublisher.FixOutcome

    private struct Sent {
        var id: String
        var position: Position
        var sentAt: ContinuousClock.Instant
    }

    /// The open connection, once its `welcome` came.
    private(set) var connection: Connection?
    /// The newest audience an `ack` reported.
    var audience: VolunteerPublisher.Audience?
    /// Sent on the current connection and not acknowledged yet, oldest first.
    private var unacknowledged: [Sent] = []
    /// The newest fix not sent on the current connection (none open, or handed over before its `welcome`).
    private(set) var waiting: Position?
    /// The timestamp of the newest fix handed over: nothing at or before it is taken any more.
    private var newestHanded: Int64?
    private var counter = 0

    /// When the oldest fix still unacknowledged was sent.
    var oldestUnacknowledged: ContinuousClock.Instant? { unacknowledged.first?.sentAt }

    /// The app hands over a fix: what to send (on which connection, under which id), and the outcomes it settles.
    mutating func hand(_ position: Position, now: ContinuousClock.Instant = .now) -> (send: (Connection, String)?, outcomes: [FixOutcome]) {
        if let newestHanded, position.timestamp <= newestHanded {
            return (nil, [FixOutcome(position: position, result: .superseded)])
        }
        newestHanded = position.timestamp
        guard let connection else {
            let superseded = waiting.map { FixOutcome(position: $0, result: .superseded) }
            waiting = position
            return (nil, superseded.map { [$0] } ?? [])
        }
        return ((connection, record(position, now: now)), [])
    }

    /// A connection got its `welcome`: the fix to send on it (unless older than `oldestTimestamp`, then dropped).
    mutating func connected(
        _ connection: Connection, oldestTimestamp: Int64, now: ContinuousClock.Instant = .now
    ) -> (send: (Position, String)?, outcomes: [FixOutcome]) {
        self.connection = connection
        guard let position = waiting else { return (nil, []) }
        waiting = nil
        if position.timestamp < oldestTimestamp {
            return (nil, [FixOutcome(position: position, result: .dropped(reason: "too old to send"))])
        }
        return ((position, record(position, now: now)), [])
    }

    /// The answer to the fix sent under `id` came; `nil` when it is not one of this connection's.
    mutating func acknowledged(_ id: String?, result: FixOutcome.Result) -> FixOutcome? {
        guard let id, let index = unacknowledged.firstIndex(where: { $0.id == id }) else { return nil }
        return FixOutcome(position: unacknowledged.remove(at: index).position, result: result)
    }

    /// The connection ended: the newest fix not acknowledged waits for the next one, the older ones are superseded.
    mutating func disconnected() -> [FixOutcome] {
        connection = nil
        var candidates = unacknowledged.map(\.position)
        if let waiting { candidates.append(waiting) }
        unacknowledged = []
        guard let newest = candidates.max(by: { $0.timestamp < $1.timestamp }) else { return [] }
        waiting = newest
        return candidates.filter { $0 != newest }.map { FixOutcome(position: $0, result: .superseded) }
    }

    /// The publisher stops: every fix still pending is dropped.
    mutating func stop() -> [FixOutcome] {
        connection = nil
        var pending = unacknowledged.map(\.position)
        if let waiting { pending.append(waiting) }
        unacknowledged = []
        waiting = nil
        return pending.map { FixOutcome(position: $0, result: .dropped(reason: "the publisher stopped before its ack")) }
    }

    private mutating func record(_ position: Position, now: ContinuousClock.Instant) -> String {
        counter += 1
        let id = "p\(counter)"
        unacknowledged.append(Sent(id: id, position: position, sentAt: now))
        return id
    }
}
