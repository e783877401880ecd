import Foundation

/// Where deliveries may go: the one rule for the webhook URL and for push endpoints.
///
/// https only, so neither a payload nor a signature crosses the network in clear; plain http only to this machine
/// (tests, a local relay). With a list of allowed hosts (`push_service_hosts`), a browser-given endpoint can only
/// point at a known push service, never make the broker POST to a host of the subscriber's choosing.
package enum DeliveryURLRule {
    /// Why `url` is refused, or `nil` when deliveries may go there.
    /// - Parameters:
    ///   - allowedHosts: exact host names, or `*.suffix` patterns matching any name that ends in `.suffix`;
    ///     `nil` allows every host.
    ///   - allowLoopbackHTTP: allow `http:` when the host is a loopback address (127.0.0.0/8, ::1, localhost).
    package static func check(_ url: String, allowedHosts: [String]?, allowLoopbackHTTP: Bool) -> String? {
        // Foundation's URL is the parser AsyncHTTPClient uses too, so the host checked is the host connected to.
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased() else { return "not a URL" }
        guard let rawHost = parsed.host, !rawHost.isEmpty else { return "the URL has no host" }
        guard parsed.user == nil && parsed.password == nil else { return "the URL must not hold a user name or password" }
        let host = rawHost.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        switch scheme {
        case "https":
            break
        case "http":
            guard allowLoopbackHTTP && isLoopback(host) else { return "the URL must use https (http only to a loopback address)" }
        default:
            return "the URL must use https"
        }
        if let allowedHosts, !allowedHosts.contains(where: { matches(host, $0) }) {
            return "the host \(host) is not an allowed push service"
        }
        return nil
    }

    /// Whether `host` is `pattern`, or ends in `.suffix` when `pattern` is `*.suffix`.
    static func matches(_ host: String, _ pattern: String) -> Bool {
        let pattern = pattern.lowercased()
        if pattern.hasPrefix("*.") {
            let suffix = pattern.dropFirst(1)  // keeps the dot, so "*.example.com" does not match "badexample.com"
            return host.hasSuffix(suffix) && host.count > suffix.count
        }
        return host == pattern
    }

    /// Whether `host` names this machine: `localhost`, an IPv4 address in 127.0.0.0/8, or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil })
        else { return false }
        return octets[0] == "127"
    }
}
