import EventDelivery
import Foundation

/// Where a webhook may be sent: `https://`, or `http://` to a loopback address (a receiver on the same machine).
enum EventURLRule {
    static func refusal(_ url: String, allowedHosts: [String]?) -> String? {
        DeliveryURLRule.check(url, allowedHosts: allowedHosts, allowLoopbackHTTP: true)
    }
}

/// A `whsec_` secret that signs webhooks.
enum WebhookSecretRule {
    static func refusal(_ secret: String) -> String? {
        do {
            _ = try WebhookSecret(secret)
            return nil
        } catch {
            return "\(error)"
        }
    }
}

/// What a donor's browser may subscribe with: an endpoint on an allowed push service (the broker POSTs to it, so
/// nothing else may be named), and keys that encrypt.
enum PushSubscriptionRule {
    static let maximumEndpointBytes = 2_048

    static func refusal(endpoint: String, allowedHosts: [String]) -> String? {
        guard endpoint.utf8.count <= maximumEndpointBytes else { return "endpoint is longer than \(maximumEndpointBytes) bytes" }
        return PushEndpointRule.refusal(endpoint, allowedHosts: allowedHosts).map { "endpoint: \($0) (push_service_hosts)" }
    }

    static func refusal(p256dh: String, auth: String) -> String? {
        do {
            _ = try WebPushSubscriptionKeys(p256dh: p256dh, auth: auth)
            return nil
        } catch {
            return "keys: \(error)"
        }
    }
}
