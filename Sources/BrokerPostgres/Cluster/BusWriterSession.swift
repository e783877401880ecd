import BrokerCore
import Logging
import NIOCore
import PostgresNIO

/// The bus writer's own PostgreSQL session, and the statement in flight on it.
///
/// A statement waits for its answer, the session's end or its deadline, whichever comes first, and the writer
/// makes a new session rather than waiting forever:
/// - a query written after the session closed is never answered: PostgresNIO writes it to a channel whose
///   handlers are gone, and its promise is dropped;
/// - a session whose path went silent (a firewall or a NAT that forgot it, a failover) answers nothing and does
///   not close: past the deadline it is closed.
final class BusWriterSession: Sendable {
    let connection: PostgresConnection
    /// The statement in flight; failed by the session's end.
    private let inFlight = LockedValue<EventLoopPromise<Void>?>(nil)

    init(connection: PostgresConnection) {
        self.connection = connection
        connection.closeFuture.whenComplete { [weak self] _ in
            self?.inFlight.withLock { $0.take() }?.fail(SessionEnded())
        }
    }

    /// Runs `query` and waits for its answer, at most `deadline`; past it the session is closed.
    /// - Throws: what PostgreSQL answered, or ``SessionEnded`` when the session ended (or was closed) first.
    func run(_ query: PostgresQuery, deadline: Duration, logger: Logger) async throws {
        let answered = connection.eventLoop.makePromise(of: Void.self)
        // The session's end completes its future after the channel went inactive: either it has, and `isClosed`
        // says so here, or it will, and finds the promise.
        let ended = inFlight.withLock { inFlight -> Bool in
            if connection.isClosed { return true }
            inFlight = answered
            return false
        }
        if ended {
            answered.fail(SessionEnded())
            throw SessionEnded()
        }
        let unanswered = connection.eventLoop.scheduleTask(in: TimeAmount(deadline)) { [connection] in
            _ = connection.close() as EventLoopFuture<Void>
        }
        connection.query(query, logger: logger).whenComplete { result in
            unanswered.cancel()
            answered.completeWith(result.map { _ in () })
        }
        defer { inFlight.withLock { if $0?.futureResult === answered.futureResult { $0 = nil } } }
        try await answered.futureResult.get()
    }

    func close() async {
        try? await connection.close()
    }

    struct SessionEnded: Error, CustomStringConvertible {
        var description: String { "the bus writer's PostgreSQL session ended" }
    }
}
