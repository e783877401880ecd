import Foundation

/// The names of one route's delivery columns, the same in SQLite and PostgreSQL (`webhook_state`, `push_attempts`...),
/// and how the push message is kept in its column. The names come from ``OutboxRoute``, never from input.
package struct OutboxColumns {
    package let state: String
    package let attempts: String
    package let nextAttemptAt: String
    package let lastError: String
    package let claimedBy: String
    package let claimedUntil: String
    package let deliveredAt: String

    package init(_ route: OutboxRoute) {
        let prefix = route.rawValue
        state = "\(prefix)_state"
        attempts = "\(prefix)_attempts"
        nextAttemptAt = "\(prefix)_next_attempt_at"
        lastError = "\(prefix)_last_error"
        claimedBy = "\(prefix)_claimed_by"
        claimedUntil = "\(prefix)_claimed_until"
        deliveredAt = "\(prefix)_delivered_at"
    }

    /// The push column's text: the message as JSON, or `nil`.
    package static func encode(_ push: PushMessage?) throws -> String? {
        guard let push else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(push), as: UTF8.self)
    }

    package static func decode(_ text: String?) throws -> PushMessage? {
        guard let text else { return nil }
        return try JSONDecoder().decode(PushMessage.self, from: Data(text.utf8))
    }
}
