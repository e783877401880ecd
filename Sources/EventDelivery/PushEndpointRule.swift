import Foundation

/// Where a browser-given push endpoint may make the broker POST: the strict rule for `push_service_hosts`.
///
/// The endpoint comes from whoever holds a watch link, so it is read as an attacker's text: no URL parser's
/// leniency (percent-decoding, a host holding a NUL, a tab or a backslash, userinfo, an IP literal matched by a
/// suffix) may widen what the operator allowed.
///
/// - `https://host[:port]/path`. `http://` only to a loopback host that the operator listed by name
///   (`127.0.0.1` or `localhost`): a push service stand-in or relay on the same machine.
/// - The host is letters, digits, dots and hyphens: labels of 1 to 63 characters, not starting or ending with a
///   hyphen, 253 characters at most. No percent-escape, no userinfo, no brackets (an IPv6 literal).
/// - An IPv4 literal matches only an entry that names it exactly, never a `*.suffix` pattern.
/// - The port is the scheme's default unless the entry that matched names it (`host:port`).
/// - A `*.suffix` entry matches on whole labels: one or more labels, then exactly the suffix's labels.
/// - The path starts with `/` and holds only visible ASCII characters other than a backslash.
package enum PushEndpointRule {
    /// An endpoint that passed, as the broker connects to it.
    package struct Endpoint: Equatable, Sendable {
        package var scheme: String
        package var host: String
        package var port: Int
    }

    /// Why `endpoint` is refused, or `nil` when pushes may go there.
    package static func refusal(_ endpoint: String, allowedHosts: [String]) -> String? {
        switch parse(endpoint, allowedHosts: allowedHosts) {
        case .success: nil
        case .failure(let refusal): refusal.reason
        }
    }

    /// A refusal's words.
    package struct Refusal: Error, Equatable {
        package var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// The endpoint's scheme, host and port when it passes.
    package static func parse(_ endpoint: String, allowedHosts: [String]) -> Result<Endpoint, Refusal> {
        let scheme: String
        let rest: Substring
        if endpoint.hasPrefix("https://") {
            scheme = "https"
            rest = endpoint.dropFirst("https://".count)
        } else if endpoint.hasPrefix("http://") {
            scheme = "http"
            rest = endpoint.dropFirst("http://".count)
        } else {
            return .failure(Refusal("the URL must start with https://"))
        }
        // Every character a parser could read two ways is refused anywhere: controls, spaces, a backslash, non-ASCII.
        guard rest.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) else {
            return .failure(Refusal("the URL holds a space, a control character, a backslash or a non-ASCII character"))
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        guard slash < rest.endIndex else { return .failure(Refusal("the URL has no path")) }
        guard !authority.contains("@") else { return .failure(Refusal("the URL must not hold a user name or password")) }
        guard !authority.contains("%") else { return .failure(Refusal("the host must not hold a percent-escape")) }
        guard !authority.contains("[") && !authority.contains("]") else { return .failure(Refusal("the host must be a name, not an IP address")) }
        let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let host = parts[0].lowercased()
        guard isHostName(host) else {
            return .failure(Refusal("the host must be letters, digits, dots and hyphens, in labels of 1 to 63 characters"))
        }
        let defaultPort = scheme == "https" ? 443 : 80
        var port = defaultPort
        var explicitPort = false
        if parts.count == 2 {
            guard let number = Int(parts[1]), parts[1].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isNumber), (1...65_535).contains(number) else {
                return .failure(Refusal("the port is not a number from 1 to 65535"))
            }
            port = number
            explicitPort = number != defaultPort
        }
        guard let entry = allowedHosts.first(where: { matches(host: host, port: explicitPort ? port : nil, entry: $0) }) else {
            if explicitPort, allowedHosts.contains(where: { matches(host: host, port: nil, entry: $0) }) {
                return .failure(Refusal("the port \(port) is not allowed for \(host); only the default port is"))
            }
            return .failure(Refusal("the host \(host) is not an allowed push service"))
        }
        if scheme == "http" {
            // Plain http only to this machine, and only to a host the operator named (not a pattern).
            guard isLoopback(host), !entry.hasPrefix("*.") else {
                return .failure(Refusal("the URL must use https (http only to a loopback push service listed by name)"))
            }
        }
        // Foundation's URL is what the HTTP client reads: it must see the very host and port checked here.
        guard let parsed = URL(string: endpoint), parsed.host?.lowercased() == host, (parsed.port ?? defaultPort) == port else {
            return .failure(Refusal("the URL does not read the same to every parser"))
        }
        return .success(Endpoint(scheme: scheme, host: host, port: port))
    }

    /// Whether `host` is a syntactically valid host name of letters, digits, dots and hyphens.
    static func isHostName(_ host: String) -> Bool {
        guard !host.isEmpty, host.utf8.count <= 253 else { return false }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            guard (1...63).contains(label.utf8.count), label.first != "-", label.last != "-" else { return false }
            return label.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-")
            }
        }
    }

    /// Whether `host` is four decimal labels: an IPv4 literal, which only an exact entry may allow.
    static func isIPv4Literal(_ host: String) -> Bool {
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        return labels.count == 4 && labels.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }

    /// Whether `host` (and `port`, when not the default) is what `entry` allows: `name`, `name:port`, `*.suffix` or
    /// `*.suffix:port`, a pattern matching on whole labels.
    static func matches(host: String, port: Int?, entry: String) -> Bool {
        let parts = entry.lowercased().split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let pattern = String(parts[0])
        let entryPort = parts.count == 2 ? Int(parts[1]) : nil
        guard entryPort == port else { return false }
        if pattern.hasPrefix("*.") {
            guard !isIPv4Literal(host) else { return false }
            let suffix = pattern.dropFirst(2).split(separator: ".", omittingEmptySubsequences: false)
            let labels = host.split(separator: ".", omittingEmptySubsequences: false)
            return labels.count > suffix.count && Array(labels.suffix(suffix.count)) == suffix
        }
        return host == pattern
    }

    /// Whether `host` names this machine: `localhost` or an IPv4 address in 127.0.0.0/8.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || (isIPv4Literal(host) && host.hasPrefix("127.") && host.split(separator: ".").allSatisfy { UInt8($0) != nil })
    }
}

extension PushEndpointRule {
    /// Whether `entry` is a `push_service_hosts` entry: a host name or `*.suffix`, with an optional `:port`.
    package static func isAllowedHostEntry(_ entry: String) -> Bool {
        let parts = entry.lowercased().split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count == 2 {
            guard let port = Int(parts[1]), parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), (1...65_535).contains(port) else { return false }
        }
        let host = parts[0].hasPrefix("*.") ? String(parts[0].dropFirst(2)) : String(parts[0])
        return isHostName(host)
    }
}
