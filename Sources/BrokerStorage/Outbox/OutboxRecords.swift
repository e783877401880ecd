/// A row a node leased to send on one route: the event and how many attempts that route made so far.
package struct ClaimedEvent: Sendable, Equatable {
    package var event: OutboxEvent
    /// Failed attempts on the claimed route before this one (0 on the first).
    package var attempts: Int

    package init(event: OutboxEvent, attempts: Int) {
        self.event = event
        self.attempts = attempts
    }
}

/// A row a route gave up on, as an operator sees it.
package struct FailedEvent: Sendable, Equatable {
    package var id: String
    package var donation: String
    package var type: String
    package var occurredAt: Int64
    package var attempts: Int
    /// Why the last attempt failed (short, never a payload).
    package var lastError: String?

    package init(id: String, donation: String, type: String, occurredAt: Int64, attempts: Int, lastError: String?) {
        self.id = id
        self.donation = donation
        self.type = type
        self.occurredAt = occurredAt
        self.attempts = attempts
        self.lastError = lastError
    }
}

/// The outbox of one route, for metrics.
package struct OutboxStats: Sendable, Equatable {
    /// Rows waiting to be sent, retries included.
    package var pending: Int
    /// Pending rows that failed at least once.
    package var retrying: Int
    package var failed: Int
    /// How long ago the oldest pending event occurred, in milliseconds; 0 when nothing is pending.
    package var oldestPendingAge: Int64

    package init(pending: Int, retrying: Int, failed: Int, oldestPendingAge: Int64) {
        self.pending = pending
        self.retrying = retrying
        self.failed = failed
        self.oldestPendingAge = oldestPendingAge
    }
}

/// A browser's Web Push subscription for one donation, bound to the donation's incarnation: a donation deleted
/// and made again under the same id does not push to the subscriptions of the one before.
package struct PushSubscriptionRecord: Sendable, Equatable {
    package var donation: String
    package var incarnation: String
    /// The https URL of the push service.
    package var endpoint: String
    /// base64url of the browser's 65-byte uncompressed P-256 point.
    package var p256dh: String
    /// base64url of the browser's 16-byte authentication secret.
    package var auth: String
    /// Milliseconds since the epoch.
    package var createdAt: Int64

    package init(donation: String, incarnation: String, endpoint: String, p256dh: String, auth: String, createdAt: Int64) {
        self.donation = donation
        self.incarnation = incarnation
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
        self.createdAt = createdAt
    }
}
