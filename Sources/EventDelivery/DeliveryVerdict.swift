/// What a sender does after an attempt: the one reading of HTTP answers for webhooks and for Web Push.
package enum DeliveryVerdict: Sendable, Equatable {
    /// The receiver took it (2xx).
    case delivered
    /// Try again later, by the retry schedule.
    case retry
    /// The push service says the subscription no longer exists (404, 410): forget the subscription.
    case subscriptionGone
    /// The push service refused this message for good (another 4xx, or a redirect): trying again cannot help.
    case drop

    /// A webhook receiver's answer. Everything but 2xx is retried: a 4xx is usually a receiver being deployed or
    /// misconfigured, which its operator fixes, and Standard Webhooks senders retry it too.
    package static func webhook(_ outcome: DeliveryOutcome) -> DeliveryVerdict {
        if case .status(let status) = outcome, (200..<300).contains(status) { return .delivered }
        return .retry
    }

    /// A push service's answer (RFC 8030 section 8 and the vendors' documentation): 404 and 410 say the
    /// subscription is gone; 408, 429, 5xx and no answer are passing; any other refusal (a bad VAPID token, a
    /// payload too large, a redirect) would be refused again.
    package static func push(_ outcome: DeliveryOutcome) -> DeliveryVerdict {
        switch outcome {
        case .failed:
            return .retry
        case .status(let status):
            switch status {
            case 200..<300: return .delivered
            case 404, 410: return .subscriptionGone
            case 408, 429, 500..<600: return .retry
            default: return .drop
            }
        }
    }
}
