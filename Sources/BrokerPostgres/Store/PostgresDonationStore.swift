import BrokerCore
import BrokerProtocol
import BrokerStorage
import Foundation
import Logging
import PostgresNIO

/// Donations in PostgreSQL, shared by every node of a cluster.
///
/// A change runs in one transaction that takes a cluster-wide advisory lock, reads the row, lets the caller
/// decide, writes the row with the next value of the `lb_revision` sequence and tells every node with `pg_notify`
/// (delivered at commit, in commit order) that the donation changed at that revision, sealed; nodes read the row.
/// The events the change causes are appended to the event outbox (``PostgresEventOutbox``) in that transaction.
/// The lock makes revision order and commit order the same, so a node that missed notifications can catch up
/// with `changes(since:)` without a gap (a revision below a committed one is committed or never will be); donation changes
/// are a few per second, far below what one lock allows. Deleted donations stay as rows without a body
/// (tombstones) so that their deletion has a revision too.
struct PostgresDonationStore: DonationStore {
    let client: PostgresClient
    /// This node's name, stamped on the change events it sends.
    let node: String
    /// Seal the change events and key the stored last positions.
    let keys: ClusterKeys
    let logger: Logger
    /// How long one store call may take before the caller is told the store is unavailable.
    var timeout: Duration = .seconds(5)

    /// The key of the advisory lock every change takes (an arbitrary constant: "lb" + "rev").
    static let changeLockKey: Int64 = 0x6C62_7265_76
    /// The NOTIFY channel every node listens on.
    static let eventChannel = "lb_events"

    /// Whether any node kept a fix of `channel` after `since` (milliseconds since the Unix epoch), by the stored
    /// newest positions: a node that does not hear a volunteer's bus shard asks before it calls the volunteer silent.
    func heard(channel: String, since: Int64) async throws -> Bool {
        try await guarded {
            let rows = try await client.query(
                """
                SELECT 1 FROM lb_last_positions WHERE channel_key = ANY(\(keys.channelKeys(channel)))
                    AND kept_at > to_timestamp(\(Double(since) / 1000)) LIMIT 1
                """, logger: logger)
            for try await _ in rows { return true }
            return false
        }
    }

    package func donation(id: String) async throws -> Donation? {
        try await guarded {
            let rows = try await client.query("SELECT body FROM lb_donations WHERE id = \(id)", logger: logger)
            for try await body in rows.decode(String?.self) {
                return try body.map(Self.decode)
            }
            return nil
        }
    }

    package func change(
        id: String, _ decide: @escaping @Sendable (Donation?) throws -> DonationDecision,
        events: @escaping @Sendable (DonationChange) throws -> [OutboxEvent]
    ) async throws -> DonationChange? {
        try await guarded {
            try await client.withTransaction(logger: logger) { connection -> DonationChange? in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.changeLockKey))", logger: logger)
                var old: Donation?
                for try await body in try await connection.query("SELECT body FROM lb_donations WHERE id = \(id)", logger: logger).decode(String?.self) {
                    old = try body.map(Self.decode)
                }
                let new: Donation?
                switch try decide(old) {
                case .keep:
                    return nil
                case .delete:
                    guard old != nil else { return nil }
                    new = nil
                case .save(let donation):
                    new = donation
                }
                let body = try new.map(Self.encode)
                let active = new.map { !$0.state.isTerminal } ?? false
                var revision: Int64 = 0
                let written = try await connection.query(
                    """
                    INSERT INTO lb_donations (id, body, active, revision) VALUES (\(id), \(body), \(active), nextval('lb_revision'))
                    ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body, active = EXCLUDED.active, revision = EXCLUDED.revision
                    RETURNING revision
                    """, logger: logger)
                for try await value in written.decode(Int64.self) { revision = value }
                let change = DonationChange(id: id, revision: revision, old: old, new: new)
                try await PostgresEventOutbox.insert(try events(change), on: connection, logger: logger)
                if let channel = old?.volunteer, old?.state.isTrackable == true,
                    new?.state.isTrackable != true || new?.volunteer != channel
                {
                    // Its donor may no longer see the volunteer's position: the stored last position goes (under every
                    // secret's key, for rows kept before a rotation). The bus's writer keeps one only while holding
                    // this lock shared, so none comes back after this.
                    try await connection.query(
                        "DELETE FROM lb_last_positions WHERE channel_key = ANY(\(keys.channelKeys(channel)))", logger: logger)
                }
                let payload = try ClusterEvent.donation(origin: node, id: id, revision: revision).sealed(with: keys, channel: Self.eventChannel)
                try await connection.query("SELECT pg_notify(\(Self.eventChannel), \(payload))", logger: logger)
                return change
            }
        }
    }

    package func activeDonations() async throws -> StoreSnapshot {
        try await guarded {
            try await client.withTransaction(logger: logger) { connection in
                try await Self.snapshot(on: connection, logger: logger)
            }
        }
    }

    /// The active donations and the revision they were read at, read under the change lock so that no change
    /// commits in between. Runs inside a transaction.
    static func snapshot(on connection: PostgresConnection, logger: Logger) async throws -> StoreSnapshot {
        try await connection.query("SELECT pg_advisory_xact_lock(\(changeLockKey))", logger: logger)
        var revision: Int64 = 0
        for try await value in try await connection.query("SELECT coalesce(max(revision), 0) FROM lb_donations", logger: logger).decode(Int64.self) {
            revision = value
        }
        var donations: [Donation] = []
        for try await body in try await connection.query("SELECT body FROM lb_donations WHERE active", logger: logger).decode(String.self) {
            donations.append(try decode(body))
        }
        return StoreSnapshot(donations: donations, revision: revision)
    }

    /// The donation's row as it is now, as a change at the row's revision (`nil` if there is no row): how a node
    /// applies a change the bus announced.
    func current(id: String) async throws -> DonationChange? {
        try await guarded {
            let rows = try await client.query("SELECT body, revision FROM lb_donations WHERE id = \(id)", logger: logger)
            for try await (body, revision) in rows.decode((String?, Int64).self) {
                return DonationChange(id: id, revision: revision, old: nil, new: try body.map(Self.decode))
            }
            return nil
        }
    }

    /// Every change after `revision`, oldest first: how a node that lost its bus catches up.
    func changes(since revision: Int64) async throws -> [DonationChange] {
        try await guarded {
            var changes: [DonationChange] = []
            let rows = try await client.query(
                "SELECT id, body, revision FROM lb_donations WHERE revision > \(revision) ORDER BY revision", logger: logger)
            for try await (id, body, revision) in rows.decode((String, String?, Int64).self) {
                changes.append(DonationChange(id: id, revision: revision, old: nil, new: try body.map(Self.decode)))
            }
            return changes
        }
    }

    private static func encode(_ donation: Donation) throws -> String {
        String(decoding: try WireJSON.encode(donation), as: UTF8.self)
    }

    private static func decode(_ body: String) throws -> Donation {
        try JSONDecoder().decode(Donation.self, from: Data(body.utf8))
    }

    /// Runs `body` with the store's timeout, and turns a store that cannot be reached into
    /// ``DonationStoreUnavailable``; what the caller's `decide` threw comes out as it was.
    private func guarded<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await Self.guarded(timeout: timeout, body)
    }

    /// Runs `body` within `timeout`, and turns a PostgreSQL that cannot be reached into ``DonationStoreUnavailable``;
    /// what a caller's closure threw inside a transaction comes out as it was. The event outbox's calls go through it too.
    static func guarded<T: Sendable>(timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        do {
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask { try await body() }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let value = first else {
                    throw DonationStoreUnavailable(description: "PostgreSQL did not answer within \(timeout)")
                }
                return value
            }
        } catch let error as PostgresTransactionError {
            if let closureError = error.closureError, !(closureError is PSQLError) { throw closureError }
            throw Self.classify(error.closureError ?? error.beginError ?? error.commitError ?? error)
        } catch {
            throw Self.classify(error)
        }
    }

    /// A connection problem, or the server going away or refusing new work, is "unavailable" (retry later);
    /// anything else is a real error.
    static func classify(_ error: any Error) -> any Error {
        if error is DonationStoreUnavailable || error is any DonationChangeRefusal { return error }
        if let error = error as? PSQLError {
            if error.code == .server {
                let state = error.serverInfo?[.sqlState] ?? ""
                if state.hasPrefix("08") || state.hasPrefix("57") || state.hasPrefix("53") {
                    return DonationStoreUnavailable(description: "PostgreSQL refused the request: \(error.serverInfo?[.message] ?? state)")
                }
                return error
            }
            return DonationStoreUnavailable(description: "PostgreSQL cannot be reached (\(error.code))")
        }
        if error is DecodingError || error is EncodingError { return error }
        return DonationStoreUnavailable(description: "PostgreSQL cannot be reached: \(error)")
    }
}
