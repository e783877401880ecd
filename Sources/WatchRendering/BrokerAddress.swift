import Foundation

/// The broker's WebSocket address as the donor may type it: with or without the scheme and the `/v1/ws` path.
public enum BrokerAddress {
    /// The WebSocket path of the broker.
    public static let webSocketPath = "/v1/ws"

    /// `ws://127.0.0.1:8080` becomes `ws://127.0.0.1:8080/v1/ws`; `http(s)` becomes `ws(s)`; a missing scheme is `ws`.
    /// A path other than `/v1/ws` is kept as a prefix (a broker behind a reverse proxy): `ws://h/broker/v1/ws`.
    /// - Returns: `nil` when the text is not a usable address.
    public static func webSocketURL(_ text: String) -> String? {
        var text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return nil }
        if !text.contains("://") { text = "ws://" + text }
        guard var components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else { return nil }
        switch scheme {
        case "ws", "http": components.scheme = "ws"
        case "wss", "https": components.scheme = "wss"
        default: return nil
        }
        guard let host = components.host, !host.isEmpty else { return nil }
        var path = components.path
        while path.hasSuffix("/") { path.removeLast() }
        if !path.hasSuffix(webSocketPath) { path += webSocketPath }
        components.path = path
        components.fragment = nil
        return components.string
    }

    /// The plain HTTP(S) address of the same endpoint, to ask the broker why it refused an upgrade.
    public static func httpURL(forWebSocketURL url: String) -> String? {
        guard var components = URLComponents(string: url) else { return nil }
        switch components.scheme {
        case "ws": components.scheme = "http"
        case "wss": components.scheme = "https"
        default: return nil
        }
        return components.string
    }
}
