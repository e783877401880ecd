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
