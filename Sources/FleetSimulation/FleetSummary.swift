import Foundation

/// What a fleet run did and whether the broker behaved.
public struct FleetSummary: Sendable, Codable {
    public var runID: String
    public var seconds: Double
    public var volunteers: Int
    public var stats: FleetStats.Snapshot
    /// The first error messages.
    public var errors: [String]

    public init(runID: String, seconds: Double, volunteers: Int, stats: FleetStats.Snapshot, errors: [String]) {
        self.runID = runID
        self.seconds = seconds
        self.volunteers = volunteers
        self.stats = stats
        self.errors = errors
    }

    /// Whether every delivery was expected and none was lost, with no protocol error.
    public var passed: Bool { stats.errors == 0 && stats.lost == 0 && stats.rateLimited == 0 }

    /// The summary as printed at the end of a run.
    public var text: String {
        let s = stats
        let span = max(seconds, 0.001)
        var lines = [
            "Fleet \(runID) ran \(String(format: "%.1f", seconds)) s with \(volunteers) volunteer(s).",
            "  donations:  \(s.created) created, \(s.delivered) delivered, \(s.cancelled) cancelled (\(s.dropped) lost their volunteer first), \(s.deleted) unfinished and deleted at the end",
            "  positions:  \(s.published) published (\(String(format: "%.1f", Double(s.published) / span))/s), \(s.kept) kept, \(s.rateLimited) rate-limited",
            "  donors:     \(s.deliveries) live positions received (\(String(format: "%.1f", Double(s.deliveries) / span))/s), \(s.recovered) recovered with since, \(s.arrivals) arrivals, \(s.lost) lost, \(s.reconnects) reconnects",
            "  latency:    p50 \(ms(s.latency.p50)), p90 \(ms(s.latency.p90)), p99 \(ms(s.latency.p99)), max \(ms(s.latency.max)) (publish to donor, \(s.latency.count) samples)",
            "  errors:     \(s.errors)",
        ]
        for (kind, count) in s.errorKinds.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) { lines.append("    \(count) x \(kind)") }
        if !errors.isEmpty { lines.append("  first errors:") }
        for message in errors { lines.append("    - \(message)") }
        if s.errors > errors.count { lines.append("    ... and \(s.errors - errors.count) more") }
        lines.append(passed ? "RESULT: OK" : "RESULT: FAILED (lost or unexpected deliveries, rate limiting, or protocol errors; see above)")
        return lines.joined(separator: "\n")
    }

    private func ms(_ value: Double) -> String { String(format: "%.2f ms", value) }
}
