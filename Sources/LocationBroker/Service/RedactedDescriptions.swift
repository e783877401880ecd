import EventDelivery

// The types that hold a secret (a password, a key, a URL whose query may carry a token) describe themselves without
// it, however they are printed: `"\(value)"`, `String(reflecting:)`, `dump`, or a log's metadata. `PostgresLocation`
// and `ClusterKeys` do so in BrokerPostgres, beside their types.

extension BrokerConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String { "BrokerConfiguration(store: \(storeDescription))" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

extension WebhookSender: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String { "WebhookSender(\(RedactedURL.withoutQuery(url)))" }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

extension PushSender: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String { "PushSender(***)" }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// A URL as logs show it: without its user information, query and fragment, which may carry a token.
enum RedactedURL {
    static func withoutQuery(_ url: String) -> String {
        var text = Substring(url)
        if let cut = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = text[..<cut] }
        if let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@"),
            !text[scheme.upperBound..<at].contains("/")
        {
            text = text[..<scheme.upperBound] + "***@" + text[text.index(after: at)...]
        }
        return String(text)
    }
}
