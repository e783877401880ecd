import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a failed ``BrokerConnection/connect(url:token:tls:timeout:keepalive:closeTimeout:logger:)`` into a
/// ``ConnectionStateMachine/Ending`` the reconnect rules understand.
///
/// A refused upgrade does not say its HTTP status, so the broker is asked again with a plain GET and the same
/// token: it answers 401 with the reason for a bad token, 503 while shutting down, 429 over the connection limit,
/// and 400 when the token is fine (the refusal was passing).
public enum UpgradeDiagnosis {
    /// The broker's `{"error":{"code","message"}}` body.
    private struct ErrorBody: Decodable {
        struct Detail: Decodable {
            var code: String
            var message: String
        }
        var error: Detail
    }

    /// Why `error` happened when connecting to `url` with `token`.
    public static func ending(for error: any Error, url: String, token: String?) async -> ConnectionStateMachine.Ending {
        let short = shortReason(error)
        guard (error as? BrokerClientError)?.kind == .upgradeRefused, let address = httpURL(forWebSocketURL: url) else {
            return .unreachable(short)
        }
        var request = URLRequest(url: address, timeoutInterval: 5)
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        do {
            let (data, response) = try await URLSession.shared.data(for: request)
            guard let http = response as? HTTPURLResponse else { return .unreachable(short) }
            let message = (try? JSONDecoder().decode(ErrorBody.self, from: data))?.error.message ?? "HTTP \(http.statusCode)"
            // 400 means the token and the endpoint are fine: the refusal was passing (a race with a restart).
            if http.statusCode == 400 { return .unreachable("the upgrade was refused: \(message)") }
            return .refused(status: http.statusCode, message: message)
        } catch {
            return .unreachable("\(short) (\(shortReason(error)))")
        }
    }

    /// The gist of a connection error: NIO's descriptions nest the address and errno several levels deep.
    public static func shortReason(_ error: any Error) -> String {
        let text = "\(error)"
        let lowered = text.lowercased()
        if lowered.contains("connection refused") { return "connection refused" }
        if lowered.contains("connection reset") { return "connection reset" }
        if lowered.contains("timed out") || lowered.contains("timeout") { return "timed out" }
        if lowered.contains("upgrade failed") { return "the WebSocket upgrade was refused" }
        if lowered.contains("network is unreachable") || lowered.contains("no route") { return "network unreachable" }
        if lowered.contains("resolve") || lowered.contains("name or service") { return "host name not found" }
        return text
    }

    /// The plain HTTP(S) address of a `ws(s)://` endpoint.
    static func httpURL(forWebSocketURL url: String) -> URL? {
        guard var components = URLComponents(string: url) else { return nil }
        switch components.scheme {
        case "ws": components.scheme = "http"
        case "wss": components.scheme = "https"
        default: return nil
        }
        return components.url
    }
}
