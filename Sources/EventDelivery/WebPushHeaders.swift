import NIOHTTP1

/// The headers of a push request to a push service (RFC 8030 section 5, RFC 8291, RFC 8292), checked so a bad
/// value is refused here rather than by the push service after the message was encrypted and sent.
package enum WebPushHeaders {
    /// The urgencies RFC 8030 section 5.3 defines, from least to most urgent.
    package static let urgencies = ["very-low", "low", "normal", "high"]
    /// The longest topic RFC 8030 section 5.4 allows.
    package static let maximumTopicLength = 32

    /// The headers for an encrypted body (`WebPushEncryption`), with `authorization` from
    /// `VAPIDKey.authorization(endpoint:subject:expiresAt:now:)`.
    /// - Parameters:
    ///   - ttlSeconds: how long the push service keeps the message for a browser that is offline (0: deliver now
    ///     or never).
    ///   - urgency: one of `urgencies`; a low urgency lets a phone on battery wait.
    ///   - topic: a newer message with the same topic replaces one the push service still holds; `nil` for none.
    package static func make(authorization: String, ttlSeconds: Int, urgency: String, topic: String?)
        throws(WebPushHeadersError) -> HTTPHeaders
    {
        guard ttlSeconds >= 0 else { throw .negativeTTL }
        guard urgencies.contains(urgency) else { throw .unknownUrgency(urgency) }
        var headers: HTTPHeaders = [
            "Authorization": authorization,
            "TTL": String(ttlSeconds),
            "Urgency": urgency,
            "Content-Encoding": "aes128gcm",
            "Content-Type": "application/octet-stream",
        ]
        if let topic {
            guard !topic.isEmpty, topic.count <= maximumTopicLength, topic.utf8.allSatisfy(isBase64URL) else { throw .badTopic }
            headers.add(name: "Topic", value: topic)
        }
        return headers
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}
