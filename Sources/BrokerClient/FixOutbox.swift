import BrokerProtocol

/// The fixes a ``VolunteerPublisher`` was handed and has not seen settled: a value type with no I/O, kept under the
/// publisher's lock, so each rule is tested without sockets.
///
/// - A fix sent on the current connection stays here until its `ack` or `error` (matched by `re`).
/// - When the connection ends, the newest fix not acknowledged is kept to send on the next one; every older one
///   is superseded. An older fix is never sent after a newer one.
/// - While disconnected only the newest fix waits: a newer one supersedes it.
/// - Once stopped, a fix handed over is dropped at once: nothing waits for a connection that will not come.
///
/// Every fix handed over gets a ticket and, exactly once, a ``Settled`` with that ticket: what the publisher's
/// ``VolunteerPublisher/FixReceipt`` waits for.
///
/// Generic over the connection (a ``BrokerConnection`` in the publisher), so tests need no socket.
struct FixOutbox<Connection: Sendable>: Sendable {
    typealias FixOutcome = VolunteerPublisher.FixOutcome

    /// What became of the fix handed over under `ticket`.
    struct Settled: Sendable, Equatable {
        var ticket: Int
        var outcome: FixOutcome
    }

    private struct Fix {
        var position: Position
        var ticket: Int
    }

    private struct Sent {
        var id: String
        var fix: Fix
        var sentAt: ContinuousClock.Instant
    }

    /// The open connection, once its `welcome` came.
    private(set) var connection: Connection?
    /// The newest audience an `ack` reported.
    var audience: VolunteerPublisher.Audience?
    /// Sent on the current connection and not acknowledged yet, oldest first.
    private var unacknowledged: [Sent] = []
    /// The newest fix not sent on the current connection (none open, or handed over before its `welcome`).
    private var waitingFix: Fix?
    /// The timestamp of the newest fix handed over: nothing at or before it is taken any more.
    private var newestHanded: Int64?
    private var counter = 0
    private var tickets = 0
    private var stopped = false

    /// The newest fix not sent on the current connection.
    var waiting: Position? { waitingFix?.position }

    /// When the oldest fix still unacknowledged was sent.
    var oldestUnacknowledged: ContinuousClock.Instant? { unacknowledged.first?.sentAt }

    /// The app hands over a fix: its ticket, what to send (on which connection, under which id), and the fixes it
    /// settles (itself, when it is not newer than one handed before or the outbox stopped).
    mutating func hand(
        _ position: Position, now: ContinuousClock.Instant = .now
    ) -> (ticket: Int, send: (Connection, String)?, outcomes: [Settled]) {
        tickets += 1
        let fix = Fix(position: position, ticket: tickets)
        if stopped {
            return (fix.ticket, nil, [settle(fix, .dropped(reason: "the publisher stopped"))])
        }
        if let newestHanded, position.timestamp <= newestHanded {
            return (fix.ticket, nil, [settle(fix, .superseded)])
        }
        newestHanded = position.timestamp
        guard let connection else {
            let superseded = waitingFix.map { settle($0, .superseded) }
            waitingFix = fix
            return (fix.ticket, nil, superseded.map { [$0] } ?? [])
        }
        return (fix.ticket, (connection, record(fix, now: now)), [])
    }

    /// A connection got its `welcome`: the fix to send on it (unless older than `oldestTimestamp`, then dropped).
    mutating func connected(
        _ connection: Connection, oldestTimestamp: Int64, now: ContinuousClock.Instant = .now
    ) -> (send: (Position, String)?, outcomes: [Settled]) {
        guard !stopped else { return (nil, []) }
        self.connection = connection
        guard let fix = waitingFix else { return (nil, []) }
        waitingFix = nil
        if fix.position.timestamp < oldestTimestamp {
            return (nil, [settle(fix, .dropped(reason: "too old to send"))])
        }
        return ((fix.position, record(fix, now: now)), [])
    }

    /// The answer to the fix sent under `id` came; `nil` when it is not one of this connection's.
    mutating func acknowledged(_ id: String?, result: FixOutcome.Result) -> Settled? {
        guard let id, let index = unacknowledged.firstIndex(where: { $0.id == id }) else { return nil }
        return settle(unacknowledged.remove(at: index).fix, result)
    }

    /// The connection ended: the newest fix not acknowledged waits for the next one, the older ones are superseded.
    mutating func disconnected() -> [Settled] {
        connection = nil
        var candidates = unacknowledged.map(\.fix)
        if let waitingFix { candidates.append(waitingFix) }
        unacknowledged = []
        guard let newest = candidates.max(by: { $0.position.timestamp < $1.position.timestamp }) else { return [] }
        waitingFix = newest
        return candidates.filter { $0.ticket != newest.ticket }.map { settle($0, .superseded) }
    }

    /// The publisher stops: every fix still pending is dropped, and so is every fix handed over afterwards.
    mutating func stop() -> [Settled] {
        stopped = true
        connection = nil
        var pending = unacknowledged.map(\.fix)
        if let waitingFix { pending.append(waitingFix) }
        unacknowledged = []
        waitingFix = nil
        return pending.map { settle($0, .dropped(reason: "the publisher stopped before its ack")) }
    }

    private mutating func record(_ fix: Fix, now: ContinuousClock.Instant) -> String {
        counter += 1
        let id = "p\(counter)"
        unacknowledged.append(Sent(id: id, fix: fix, sentAt: now))
        return id
    }

    private func settle(_ fix: Fix, _ result: FixOutcome.Result) -> Settled {
        Settled(ticket: fix.ticket, outcome: FixOutcome(position: fix.position, result: result))
    }
}
