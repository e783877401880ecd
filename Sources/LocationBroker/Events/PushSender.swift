import BrokerStorage
import EventDelivery
import Foundation
import NIOHTTP1

/// Sends one push to one browser: the words encrypted for its keys (RFC 8291), signed with the broker's VAPID key
/// (RFC 8292), through its push service (RFC 8030).
struct PushSender: PushSending {
    let key: VAPIDKey
    /// Keys each donation's `Topic`, so nobody outside can name it.
    let topics: PushTopicKey
    let subject: String
    let poster: DeliveryPoster
    /// Checked again at each push: an operator who narrows `push_service_hosts` stops pushes to the others.
    let allowedHosts: [String]

    /// What the service worker reads.
    private struct Payload: Encodable {
        let title: String
        let body: String
        let tag: String
        let donation: String
        let type: String
        let url: String
    }

    func send(_ event: OutboxEvent, message: PushMessage, to subscription: PushSubscriptionRecord, now: Int64) async -> AttemptVerdict {
        if let refusal = PushSubscriptionRule.refusal(endpoint: subscription.endpoint, allowedHosts: allowedHosts) {
            return .gone(refusal)
        }
        let payload = Payload(
            title: message.title, body: message.body, tag: message.tag, donation: event.donation, type: event.type,
            url: "/track/\(event.donation)")
        let body: Data
        let authorization: String
        do {
            body = try WebPushEncryption.encrypt(plaintext: try JSONEncoder().encode(payload), p256dh: subscription.p256dh, auth: subscription.auth)
        } catch {
            return .gone("the subscription's keys cannot encrypt: \(error)")
        }
        do {
            // Push services accept tokens up to a day; half a day leaves room for clocks apart.
            authorization = try key.authorization(endpoint: subscription.endpoint, subject: subject, expiresAt: now / 1000 + 12 * 3_600, now: now / 1000)
        } catch {
            return .drop("the VAPID token could not be made: \(error)")
        }
        var headers = HTTPHeaders()
        headers.add(name: "authorization", value: authorization)
        headers.add(name: "content-encoding", value: "aes128gcm")
        headers.add(name: "content-type", value: "application/octet-stream")
        headers.add(name: "ttl", value: String(max(0, message.ttlSeconds - Int((now - event.occurredAt) / 1000))))
        headers.add(name: "urgency", value: message.urgency)
        headers.add(name: "topic", value: topics.topic(donation: event.donation))
        let outcome = await poster.post(body, to: subscription.endpoint, headers: headers)
        switch (DeliveryVerdict.push(outcome), outcome) {
        case (.delivered, _): return .delivered
        case (.subscriptionGone, .status(let status)): return .gone("the push service answered \(status)")
        case (.retry, .status(let status)): return .retry("the push service answered \(status)")
        case (.retry, .failed(let why)): return .retry(why)
        case (_, .status(let status)): return .drop("the push service answered \(status)")
        case (_, .failed(let why)): return .drop(why)
        }
    }
}
