import BrokerProtocol
import Foundation
import WatchRendering

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a connection could not be opened, and whether trying again can help.
struct ConnectFailure: Sendable {
    /// A short reason for the screen.
    var reason: String
    /// How watching ends if this is the first connection or retrying cannot help.
    var end: WatchEnd
    /// Retrying cannot help (the token is refused, there is no broker at that address).
    var isFinal: Bool

    /// The broker's `{"error":{"code","message"}}` body.
    private struct ErrorBody: Decodable {
        var error: BrokerError
    }

    /// The gist of a connection error: NIO's descriptions nest the address and errno several levels deep.
    static func shortReason(_ error: any Error) -> String {
        let text = "\(error)"
        let lowered = text.lowercased()
        if lowered.contains("connection refused") { return "connection refused" }
        if lowered.contains("timed out") || lowered.contains("timeout") { return "timed out" }
        if lowered.contains("upgrade failed") { return "the WebSocket upgrade was refused" }
        if lowered.contains("network is unreachable") || lowered.contains("no route") { return "network unreachable" }
        if lowered.contains("resolve") || lowered.contains("name or service") { return "host name not found" }
        return text
    }

    /// Finds out why `error` happened. A refused upgrade does not say its HTTP status, so the broker is asked again
    /// with a plain GET and the same token: it answers 401 with the reason for a bad token, 503 while shutting down,
    /// and 400 for a good token.
    static func diagnose(_ error: any Error, url: String, token: String) async -> ConnectFailure {
        let original = shortReason(error)
        guard let address = BrokerAddress.httpURL(forWebSocketURL: url).flatMap(URL.init(string:)) else {
            return ConnectFailure(reason: original, end: .connectionFailed(original), isFinal: false)
        }
        var request = URLRequest(url: address, timeoutInterval: 5)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let status: Int
        let body: BrokerError?
        do {
            let (data, response) = try await URLSession.shared.data(for: request)
            guard let http = response as? HTTPURLResponse else {
                return ConnectFailure(reason: original, end: .connectionFailed(original), isFinal: false)
            }
            status = http.statusCode
            body = try? JSONDecoder().decode(ErrorBody.self, from: data).error
        } catch {
            // Unreachable now as well: the original error says why (connection refused, no route, ...).
            let reason = "cannot reach \(url): \(original)"
            return ConnectFailure(reason: reason, end: .connectionFailed(reason), isFinal: false)
        }
        let message = body.map { TerminalText.sanitized($0.message) }
        switch status {
        case 401:
            let why = message ?? "HTTP 401"
            return ConnectFailure(reason: "token refused: \(why)", end: .unauthorized(why), isFinal: true)
        case 503:
            let why = message ?? "the broker is unavailable (HTTP 503)"
            return ConnectFailure(reason: why, end: .connectionFailed(why), isFinal: false)
        case 404:
            let why = "there is no broker WebSocket endpoint at \(url) (HTTP 404); check --broker"
            return ConnectFailure(reason: why, end: .connectionFailed(why), isFinal: true)
        default:
            let why = "\(original) (HTTP \(status)\(message.map { ": \($0)" } ?? ""))"
            return ConnectFailure(reason: why, end: .connectionFailed(why), isFinal: false)
        }
    }
}
