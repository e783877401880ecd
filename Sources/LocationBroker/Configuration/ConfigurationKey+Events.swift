import EventDelivery
import Foundation

// Trip events: webhooks to the backend and Web Push to donors.
extension ConfigurationKey {
    static let events: [ConfigurationKey] = [
        parsed(
            "webhook_url", \.webhookURL, allowed: "an `https://` URL (`http://` only to a loopback address)",
            unset: "no webhooks", example: "https://backend.example.org/hooks/location-broker",
            "Where trip events are POSTed as signed webhooks (Standard Webhooks)."
        ) { text in
            if let refusal = EventURLRule.refusal(text, allowedHosts: nil) { return .failure(Refusal(refusal)) }
            return .success(text)
        },
        webhookSecrets,
        integer("webhook_timeout_seconds", \.webhookTimeoutSeconds, 1...60, "Seconds a webhook request may take before it counts as failed."),
        integer(
            "webhook_retry_hours", \.webhookRetryHours, 1...720,
            "Hours a webhook is retried, with backoff and jitter, before it is kept as failed for an operator."),
        integer(
            "events_approaching_minutes", \.eventsApproachingMinutes, 1...120,
            "Minutes of estimated arrival that make tracking.approaching, once per destination."),
        integer(
            "events_silent_seconds", \.eventsSilentSeconds, 30...86_400,
            "Seconds without a fix inside a trackable window that make tracking.silent."),
        parsed(
            "push_subject", \.pushSubject, allowed: "a `mailto:` or `https:` URI", unset: "no Web Push", example: "mailto:operations@example.org",
            "The contact push services see in VAPID; while set, donors may turn on Web Push on the tracking page."
        ) { text in
            text.hasPrefix("mailto:") && text.count > 7 || text.hasPrefix("https://") && text.count > 8
                ? .success(text) : .failure("must be a mailto: or https: URI, such as mailto:operations@example.org")
        },
        text(
            "vapid_private_key_file", \.vapidPrivateKeyFile, allowed: "a PEM file (made, mode 0600, if missing)",
            unset: "vapid-private.pem beside the database", example: "/etc/location-broker/vapid-private.pem",
            "VAPID P-256 private key for Web Push; required in a cluster (the same file on every node)."),
        pushServiceHosts,
    ]

    /// One or more `whsec_` secrets separated by commas: each signs, so a receiver moving to a new one accepts
    /// either during the move.
    private static let webhookSecrets = Self(
        name: "webhook_secrets",
        summary: "With webhook_url: whsec_ secrets signing webhooks, comma-separated; each signs (rotation).",
        allowed: "one or more `whsec_` secrets (base64 of at least 24 bytes) separated by commas",
        whenUnset: "none", isSecret: true, example: nil,
        apply: { configuration, value in
            let secrets = value.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            guard !secrets.isEmpty else { return "must not be empty" }
            for (index, secret) in secrets.enumerated() {
                if let refusal = WebhookSecretRule.refusal(secret) { return "secret number \(index + 1) \(refusal)" }
            }
            configuration.webhookSecrets = secrets
            return nil
        },
        value: { $0.webhookSecrets.map(masked) }
    )

    private static let pushServiceHosts = Self(
        name: "push_service_hosts",
        summary: "Hosts donors' push subscriptions may point at, comma-separated; `*.` and a suffix matches whole labels below it; `:port` allows a port other than 443.",
        allowed: "host names or `*.suffix` patterns, each with an optional `:port`, separated by commas",
        whenUnset: "none", isSecret: false, example: nil,
        apply: { configuration, value in
            let hosts = value.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces).lowercased() }
            guard !hosts.isEmpty, hosts.allSatisfy(PushEndpointRule.isAllowedHostEntry) else {
                return "must be host names or *.suffix patterns, each with an optional :port, separated by commas, such as fcm.googleapis.com,*.push.apple.com"
            }
            configuration.pushServiceHosts = hosts
            return nil
        },
        // Written with spaces, so that `--help` wraps the list between hosts.
        value: { $0.pushServiceHosts.joined(separator: ", ") }
    )
}
