import BrokerStorage
import EventDelivery
import Foundation
import NIOHTTP1

/// Sends an event's webhook: the stored body, signed with every configured secret (Standard Webhooks).
struct WebhookSender: WebhookSending {
    let url: String
    let signer: WebhookSigner
    let poster: DeliveryPoster

    func send(_ event: OutboxEvent, now: Int64) async -> AttemptVerdict {
        let body = Data(event.body.utf8)
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/json")
        headers.add(name: "user-agent", value: "location-broker")
        // Signed at each attempt: the timestamp is the attempt's, as receivers refuse old ones against replays.
        for field in signer.headers(id: event.id, timestamp: now / 1000, body: body).fields {
            headers.add(name: field.name, value: field.value)
        }
        switch await poster.post(body, to: url, headers: headers) {
        case .status(let status) where (200..<300).contains(status):
            return .delivered
        case .status(let status):
            return .retry("the receiver answered \(status)")
        case .failed(let why):
            return .retry(why)
        }
    }
}
