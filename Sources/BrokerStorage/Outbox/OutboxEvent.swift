/// One event as the outbox keeps it: what the webhook sends (and, for some events, what a Web Push says) about one
/// donation, until every route has delivered it or given up.
package struct OutboxEvent: Sendable, Equatable {
    /// `evt_` and 32 lowercase hex characters, the same whenever the same event is detected: the outbox stores an id once.
    package var id: String
    package var donation: String
    /// The donation's incarnation; "" when it has none.
    package var incarnation: String
    /// The webhook's `type`, such as `tracking.approaching`.
    package var type: String
    /// Milliseconds since the epoch.
    package var occurredAt: Int64
    /// The webhook's JSON body, exactly the bytes that are signed.
    package var body: String
    /// What the push says; `nil` when this event is not pushed.
    package var push: PushMessage?
    /// Whether the event goes to the backend's webhook: not when the broker has no `webhook_url`, so that events
    /// kept only for pushes never wait as webhooks nobody will send.
    package var webhook: Bool

    package init(
        id: String, donation: String, incarnation: String, type: String, occurredAt: Int64, body: String, push: PushMessage? = nil,
        webhook: Bool = true
    ) {
        self.id = id
        self.donation = donation
        self.incarnation = incarnation
        self.type = type
        self.occurredAt = occurredAt
        self.body = body
        self.push = push
        self.webhook = webhook
    }
}

/// What a push says; encrypted for each subscription when it is sent.
package struct PushMessage: Sendable, Equatable, Codable {
    package var title: String
    package var body: String
    /// The notification tag: one per donation, so that a new ETA replaces the previous one on the donor's screen.
    package var tag: String
    /// "very-low", "low", "normal" or "high".
    package var urgency: String
    package var ttlSeconds: Int

    // The push's `Topic` is not kept here: the sender keys it (``PushTopicKey``), so the outbox never holds it.
    package init(title: String, body: String, tag: String, urgency: String, ttlSeconds: Int) {
        self.title = title
        self.body = body
        self.tag = tag
        self.urgency = urgency
        self.ttlSeconds = ttlSeconds
    }
}

/// The ways an event leaves the broker. Each row keeps its delivery state per route.
extension OutboxEvent {
    /// A silence and its end alternate per donation: a `tracking.silent` is stored only when the donation's latest
    /// silence edge is not one (none yet, or a `tracking.back`), a `tracking.back` only when it is. Every node of a
    /// cluster judges silence on its own; this makes the backend hear of each silence once, and of its end once.
    package static let silent = "tracking.silent"
    package static let back = "tracking.back"

    /// The latest silence edge this event needs before it, if it is one: `(needs silent before it?)`.
    package var silenceEdgeNeedsSilentBefore: Bool? {
        switch type {
        case Self.silent: false
        case Self.back: true
        default: nil
        }
    }
}

package enum OutboxRoute: String, Sendable, CaseIterable {
    case webhook
    case push
}

/// Where a row stands on one route.
package enum OutboxDeliveryState: String, Sendable {
    /// Waiting to be sent (first time or again after a failed attempt).
    case pending
    case delivered
    /// Given up: kept for an operator, who may queue it again.
    case failed
    /// Not sent on this route (an event without a push).
    case none
}
