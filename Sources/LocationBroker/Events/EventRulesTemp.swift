// TEMPORARY: replaced by EventDelivery's rules at the merge.
import Foundation
enum EventURLRule {
    static func refusal(_ url: String, allowedHosts: [String]?) -> String? {
        guard let parsed = URL(string: url), let host = parsed.host, !host.isEmpty else { return "must be an absolute URL" }
        if parsed.scheme == "https" { return nil }
        if parsed.scheme == "http", host == "127.0.0.1" || host == "localhost" || host == "::1" { return nil }
        return "must be https:// (http:// only to a loopback address)"
    }
}
enum WebhookSecretRule {
    static func refusal(_ secret: String) -> String? {
        guard secret.hasPrefix("whsec_"), let bytes = Data(base64Encoded: String(secret.dropFirst(6))), bytes.count >= 24 else {
            return "must be whsec_ followed by base64 of at least 24 bytes"
        }
        return nil
    }
}
enum PushSubscriptionRule {
    static func refusal(endpoint: String, allowedHosts: [String]) -> String? {
        guard endpoint.utf8.count <= 2048 else { return "endpoint is longer than 2048 bytes" }
        if let refusal = EventURLRule.refusal(endpoint, allowedHosts: allowedHosts) { return "endpoint " + refusal }
        guard let host = URL(string: endpoint)?.host?.lowercased(),
            allowedHosts.contains(where: { $0 == host || ($0.hasPrefix("*.") && host.hasSuffix($0.dropFirst())) })
        else { return "endpoint is not on a push service this broker sends to (push_service_hosts)" }
        return nil
    }
    static func refusal(p256dh: String, auth: String) -> String? { nil }
}
