import BrokerCore
import BrokerProtocol
import BrokerStorage
import Crypto
import Foundation

/// How a trip event is written for the outbox: its id, the webhook body and the words of its push.
///
/// Nothing here reads a place: an event holds no coordinate, and neither the body nor the push names a
/// person (no e-mail), an address or an institution.
enum EventMessage {
    /// The outbox row of `event`. An event with an identity gets the same id wherever and however often it
    /// is decided; a silence edge gets one from its moment and the node that judged it.
    static func outboxEvent(_ event: TrackingEvent, node: String, webhooks: Bool, pushes: Bool) -> OutboxEvent {
        OutboxEvent(
            id: id(event, node: node), donation: event.donation, incarnation: event.incarnation, type: event.type,
            occurredAt: event.at, body: body(event), push: pushes ? push(event) : nil, webhook: webhooks)
    }

    /// `evt_` and 32 hex digits of a SHA-256 of what makes the event itself.
    static func id(_ event: TrackingEvent, node: String) -> String {
        let source = event.identity ?? "\(event.donation)|\(event.incarnation)|\(event.type)|\(event.at)|\(node)"
        return "evt_" + SHA256.hash(data: Data(source.utf8)).prefix(16).lowercaseHex
    }

    /// The Standard Webhooks payload: `{"data":{...},"timestamp":"...","type":"..."}`, keys sorted, so the bytes
    /// signed are the bytes stored and sent.
    static func body(_ event: TrackingEvent) -> String {
        var data: [String: WebhookValue] = ["donation": .text(event.donation)]
        switch event.kind {
        case .started(let destination), .firstPosition(let destination), .arrived(let destination), .resumed(let destination),
            .back(let destination):
            data["destination"] = .text(destination.rawValue)
        case .approaching(let destination, let minutes, let metres):
            data["destination"] = .text(destination.rawValue)
            data["eta_minutes"] = .number(minutes)
            data["distance_m"] = .number(metres)
        case .paused(let state):
            data["state"] = .text(state.rawValue)
        case .ended(let reason):
            data["reason"] = .text(reason.rawValue)
        case .silent(let destination, let seconds):
            data["destination"] = .text(destination.rawValue)
            data["silent_seconds"] = .number(seconds)
        }
        let payload = WebhookPayload(type: event.type, timestamp: timestamp(event.at), data: data)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings and integers only: encoding cannot fail.
        return String(decoding: (try? encoder.encode(payload)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// What the donor's browser shows, for the events a donor wants to hear of with the page closed: words and
    /// an ETA, never a place.
    static func push(_ event: TrackingEvent) -> PushMessage? {
        let words: (title: String, body: String, urgency: String, ttl: Int)
        switch event.kind {
        case .approaching(let destination, let minutes, _) where destination == .home:
            words = ("Your volunteer is on the way", "About \(minutes) minute\(minutes == 1 ? "" : "s") from your home.", "normal", 300)
        case .arrived(.home):
            words = ("Your volunteer has arrived", "The volunteer is at your home.", "high", 900)
        case .resumed(.institution):
            words = ("Your donation was picked up", "It is on the way to the institution.", "normal", 3_600)
        case .approaching(.institution, let minutes, _):
            words = ("Nearly there", "Your donation is about \(minutes) minute\(minutes == 1 ? "" : "s") from the institution.", "low", 300)
        case .arrived(.institution):
            words = ("Your donation has arrived", "The volunteer is at the institution.", "normal", 3_600)
        case .ended(.delivered):
            words = ("Your donation was delivered", "Thank you: the institution has it.", "normal", 86_400)
        case .ended(.cancelled):
            words = ("Your donation was cancelled", "Tracking has ended.", "normal", 86_400)
        default:
            return nil
        }
        return PushMessage(
            title: words.title, body: words.body, tag: "donation-\(event.donation)", urgency: words.urgency, ttlSeconds: words.ttl)
    }

    /// RFC 3339 in UTC with milliseconds.
    static func timestamp(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}

/// The webhook body's shape (Standard Webhooks: `type`, `timestamp`, `data`).
private struct WebhookPayload: Encodable {
    let type: String
    let timestamp: String
    let data: [String: WebhookValue]
}

/// A value in `data`: text or a whole number, nothing else.
private enum WebhookValue: Encodable {
    case text(String)
    case number(Int)

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let text): try container.encode(text)
        case .number(let number): try container.encode(number)
        }
    }
}
