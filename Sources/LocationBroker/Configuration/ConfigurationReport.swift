import Foundation

/// What `location-broker check-config` prints: every setting's effective value and where it came from, with
/// secrets masked, so an operator can see what `serve` would run with before running it.
struct ConfigurationReport: Sendable {
    /// One setting as it stands.
    struct Line: Sendable, Equatable {
        let key: String
        /// The effective value, `(unset)` when the setting has none, or a mask for a secret.
        let value: String
        /// `default`, `file PATH`, `environment VARIABLE` or `command line`.
        let source: String
    }

    let lines: [Line]

    /// Settings whose values are never printed: only whether they are set, and their length.
    static let secretKeys = Set(ConfigurationKey.all.filter(\.isSecret).map(\.name))

    init(_ configuration: BrokerConfiguration, sources: [String: String]) {
        // Each key reads its own value; a secret's reader gives only its mask (ConfigurationKey.secret).
        lines = ConfigurationKey.all.map { key in
            Line(key: key.name, value: key.value(configuration) ?? "(unset)", source: sources[key.name] ?? "default")
        }
    }

    /// The report as text: one `key = value  (source)` line per setting, in the docs' order.
    var text: String {
        let width = lines.map(\.key.count).max() ?? 0
        return lines.map { "\($0.key.padding(toLength: width, withPad: " ", startingAt: 0)) = \($0.value)  (\($0.source))" }
            .joined(separator: "\n") + "\n"
    }
}
