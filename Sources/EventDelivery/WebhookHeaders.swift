/// The Standard Webhooks headers of one delivery attempt.
package struct WebhookHeaders: Sendable, Equatable {
    /// `webhook-id`: the event's id.
    package var id: String
    /// `webhook-timestamp`: seconds since the epoch, in decimal.
    package var timestamp: String
    /// `webhook-signature`: space-separated `v1,<base64>` signatures, one per secret.
    package var signature: String

    /// The headers as name and value pairs, in the specification's order.
    package var fields: [(name: String, value: String)] {
        [("webhook-id", id), ("webhook-timestamp", timestamp), ("webhook-signature", signature)]
    }
}
