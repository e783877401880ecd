import Foundation

/// A length of time as people type it on the command line: `500ms`, `20s`, `10m`, `1h`, or bare seconds (`20`).
public struct SimDuration: Sendable, Equatable, CustomStringConvertible {
    /// The length in seconds.
    public var seconds: Double

    public init(seconds: Double) {
        self.seconds = seconds
    }

    /// Parses `text`; `nil` when it is not a positive length with a known unit.
    public init?(parsing text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(suffix: String, factor: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        var number = trimmed, factor = 1.0
        for unit in units where trimmed.hasSuffix(unit.suffix) {
            number = String(trimmed.dropLast(unit.suffix.count))
            factor = unit.factor
            break
        }
        guard let value = Double(number), value.isFinite, value > 0 else { return nil }
        self.seconds = value * factor
    }

    public var duration: Duration { .milliseconds(Int64((seconds * 1000).rounded())) }

    public var description: String {
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600))h" }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60))m" }
        if seconds < 1 { return "\(Int((seconds * 1000).rounded()))ms" }
        return seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s"
    }
}
