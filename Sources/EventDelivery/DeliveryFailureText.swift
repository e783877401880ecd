import AsyncHTTPClient
import Foundation
import NIOCore

/// The short text of a failed attempt, kept as the outbox's `last_error` and shown to operators. It names the
/// kind of failure and never the URL's path or query, which for a push endpoint is the subscription's secret.
enum DeliveryFailureText {
    static func describe(_ error: Error, url: String, timeout: Duration) -> String {
        shortened(withoutPath(kind(of: error, timeout: timeout), of: url))
    }

    private static func kind(of error: Error, timeout: Duration) -> String {
        if error is DeliveryDeadline.Exceeded { return "timed out after \(timeout)" }
        if error is CancellationError { return "cancelled" }
        // The system's reason alone ("Connection refused"): NIO's text around it names its internals.
        if let error = error as? IOError { return "could not connect: \(String(cString: strerror(error.errnoCode)))" }
        guard let error = error as? HTTPClientError else { return "\(error)" }
        switch error {
        case .deadlineExceeded, .readTimeout, .writeTimeout: return "timed out after \(timeout)"
        case .connectTimeout: return "connect timed out"
        case .remoteConnectionClosed: return "the receiver closed the connection before answering"
        case .invalidURL, .emptyHost, .emptyScheme: return "not a URL the HTTP client can reach"
        case .cancelled: return "cancelled"
        default: return "\(error)"
        }
    }

    /// `text` with the URL, or anything after its host, replaced by the URL's origin.
    private static func withoutPath(_ text: String, of url: String) -> String {
        guard let parsed = URL(string: url), let host = parsed.host else { return text }
        let origin = "\(parsed.scheme ?? "https")://\(host)\(parsed.port.map { ":\($0)" } ?? "")"
        var cleaned = text.replacingOccurrences(of: url, with: origin)
        if !parsed.path.isEmpty && parsed.path != "/" { cleaned = cleaned.replacingOccurrences(of: parsed.path, with: "/…") }
        return cleaned
    }

    /// At most 200 characters: enough to tell the kind of failure, short enough for a column and a log line.
    private static func shortened(_ text: String) -> String {
        text.count <= 200 ? text : String(text.prefix(199)) + "…"
    }
}
