import BrokerCore
import BrokerStorage

/// What became of one delivery attempt, as the dispatcher acts on it.
enum AttemptVerdict: Sendable, Equatable {
    /// The receiver took it (2xx).
    case delivered
    /// Worth trying again later: a timeout, a refused connection, 408, 429, a 5xx (and, for webhooks, any other
    /// answer: a receiver being fixed takes them later). The text says what happened, never what was sent.
    case retry(String)
    /// A push service no longer knows the subscription (404, 410): it is deleted.
    case gone(String)
    /// A push the push service refuses for good (another 4xx): not tried again.
    case drop(String)
}

/// Sends one event's webhook to the backend.
protocol WebhookSending: Sendable {
    func send(_ event: OutboxEvent, now: Int64) async -> AttemptVerdict
}

/// Sends one push to one donor's browser.
protocol PushSending: Sendable {
    func send(_ event: OutboxEvent, message: PushMessage, to subscription: PushSubscriptionRecord, now: Int64) async -> AttemptVerdict
}
