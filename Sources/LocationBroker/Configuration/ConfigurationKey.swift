import Foundation
import TrackingPage

/// One setting, written once: its key, what it accepts, its help text, whether it is a secret, how to apply a
/// text value and how to read the effective value back. Its environment variable and its flag follow from the
/// key; its default is the one ``BrokerConfiguration`` starts with, read through ``value``.
///
/// docs/CONFIGURATION.md's tables, config/broker.yaml and `serve --help` are made from ``all``
/// (``SettingsDocument``, `scripts/generate-settings`); `SettingsDocumentTests` fails when they disagree.
struct ConfigurationKey: Sendable {
    /// The key in the YAML file, snake_case.
    let name: String
    /// One line for `--help`, config/broker.yaml and docs/CONFIGURATION.md.
    let summary: String
    /// The values accepted, in words (Markdown), for docs/CONFIGURATION.md and `--help`.
    let allowed: String
    /// What leaving the setting unset means, for a setting with no value by default ("none").
    let whenUnset: String
    /// A secret: never printed, and refused on the command line, where every user of the machine would see it.
    let isSecret: Bool
    /// A value config/broker.yaml shows commented out, for a setting with no value by default.
    let example: String?
    /// Parses `text` into the configuration, or returns what is wrong with it.
    let apply: @Sendable (inout BrokerConfiguration, String) -> String?
    /// The effective value as it may be printed (a secret only masked), `nil` when unset.
    let value: @Sendable (BrokerConfiguration) -> String?

    /// The environment variable that sets this key.
    var environmentVariable: String { "LOCATION_BROKER_" + name.uppercased() }
    /// The command-line flag of `serve` and `check-config` that sets this key.
    var flag: String { "--" + name.replacingOccurrences(of: "_", with: "-") }
    /// The default, as config/broker.yaml writes it; `nil` for a setting with no value by default.
    var defaultValue: String? { value(BrokerConfiguration()) }

    /// Every setting the broker knows, in the order the docs list them.
    static let all: [ConfigurationKey] = listening + tokens + traffic + transport + events + MapSettings.keys

    static func named(_ name: String) -> ConfigurationKey? { all.first { $0.name == name } }

    /// The key whose command-line flag is `flag` (`--max-frame-bytes`).
    static func flagged(_ flag: String) -> ConfigurationKey? { all.first { $0.flag == flag } }
}

// The kinds of setting: each checks its values the same way from every layer and says what it accepts.
extension ConfigurationKey {
    typealias Path<Value> = WritableKeyPath<BrokerConfiguration, Value> & Sendable

    /// Text that must not be empty, or that must pass `check` (which returns what is wrong).
    static func text(
        _ name: String, _ path: Path<String>, allowed: String = "non-empty text", _ summary: String,
        check: (@Sendable (String) -> Refusal?)? = nil
    ) -> Self {
        Self(name: name, summary: summary, allowed: allowed, whenUnset: "none", isSecret: false, example: nil, apply: { configuration, value in
            if let check {
                if let refusal = check(value) { return refusal.description }
            } else if value.isEmpty {
                return "must not be empty"
            }
            configuration[keyPath: path] = value
            return nil
        }, value: { $0[keyPath: path] })
    }

    static func text(
        _ name: String, _ path: Path<String?>, allowed: String = "non-empty text", unset: String = "none", example: String?, _ summary: String
    ) -> Self {
        parsed(name, path, allowed: allowed, unset: unset, example: example, summary) { $0.isEmpty ? .failure("must not be empty") : .success($0) }
    }

    /// A secret of at least ``BrokerConfiguration/minimumSecretBytes`` (checked with the others at the end, so
    /// that the refusal can say how to make one); shown only as its length.
    static func secret(_ name: String, _ path: Path<String?>, allowed: String, _ summary: String) -> Self {
        Self(name: name, summary: summary, allowed: allowed, whenUnset: "none", isSecret: true, example: nil, apply: { configuration, value in
            guard !value.isEmpty else { return "must not be empty" }
            configuration[keyPath: path] = value
            return nil
        }, value: { $0[keyPath: path].map { masked([$0]) } })
    }

    /// `*** (N bytes)` for each secret: whether it is set and its length, never the text.
    static func masked(_ secrets: [String]) -> String {
        secrets.map { "*** (\($0.utf8.count) bytes)" }.joined(separator: ", ")
    }

    static func boolean(_ name: String, _ path: Path<Bool>, _ summary: String) -> Self {
        Self(name: name, summary: summary, allowed: "`true` or `false` (any case)", whenUnset: "none", isSecret: false, example: nil, apply: { configuration, value in
            switch value.lowercased() {
            case "true": configuration[keyPath: path] = true
            case "false": configuration[keyPath: path] = false
            default: return "must be true or false, not '\(value)'"
            }
            return nil
        }, value: { "\($0[keyPath: path])" })
    }

    static func integer(_ name: String, _ path: Path<Int>, _ range: ClosedRange<Int>, _ summary: String) -> Self {
        Self(name: name, summary: summary, allowed: "\(range.lowerBound) to \(range.upperBound)", whenUnset: "none", isSecret: false, example: nil, apply: {
            configuration, value in
            guard let number = Int(value), range.contains(number) else {
                return "must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(value)'"
            }
            configuration[keyPath: path] = number
            return nil
        }, value: { "\($0[keyPath: path])" })
    }

    static func number(_ name: String, _ path: Path<Double>, _ range: ClosedRange<Double>, _ summary: String) -> Self {
        let allowed = "\(plain(range.lowerBound)) to \(plain(range.upperBound)) (decimals allowed)"
        return Self(name: name, summary: summary, allowed: allowed, whenUnset: "none", isSecret: false, example: nil, apply: { configuration, value in
            guard let number = Double(value), number.isFinite, range.contains(number) else {
                return "must be a number from \(range.lowerBound) to \(range.upperBound), not '\(value)'"
            }
            configuration[keyPath: path] = number
            return nil
        }, value: { plain($0[keyPath: path]) })
    }

    /// `150` rather than `150.0`, as an operator writes it.
    static func plain(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? "\(Int(number))" : "\(number)"
    }

    static func choice(_ name: String, _ path: Path<String>, _ choices: [String], _ summary: String) -> Self {
        let allowed = choices.map { "`\($0)`" }.joined(separator: ", ") + " (any case)"
        return Self(name: name, summary: summary, allowed: allowed, whenUnset: "none", isSecret: false, example: nil, apply: { configuration, value in
            guard choices.contains(value.lowercased()) else { return "must be one of \(choices.joined(separator: ", ")), not '\(value)'" }
            configuration[keyPath: path] = value.lowercased()
            return nil
        }, value: { $0[keyPath: path] })
    }

    /// A setting with its own parser: `parse` returns the value or what is wrong with the text; `show` gives the
    /// value as it may be printed and read again (a store's URL without its password).
    static func parsed<Value: Sendable>(
        _ name: String, _ path: Path<Value?>, allowed: String, unset: String = "none", example: String?, _ summary: String,
        show: @escaping @Sendable (Value) -> String = { "\($0)" }, parse: @escaping @Sendable (String) -> Result<Value, Refusal>
    ) -> Self {
        Self(name: name, summary: summary, allowed: allowed, whenUnset: unset, isSecret: false, example: example, apply: { configuration, value in
            switch parse(value) {
            case .success(let parsed):
                configuration[keyPath: path] = parsed
                return nil
            case .failure(let refusal):
                return refusal.description
            }
        }, value: { $0[keyPath: path].map(show) })
    }

    /// What is wrong with a value, as the error message says it (after the setting's name).
    struct Refusal: Error, CustomStringConvertible, ExpressibleByStringInterpolation {
        let description: String
        init(_ description: String) { self.description = description }
        init(stringLiteral value: String) { description = value }
        init(stringInterpolation: DefaultStringInterpolation) { description = String(stringInterpolation: stringInterpolation) }
    }
}
