import Foundation

/// The fleet's live one-line status, and the plain periodic lines printed when the output is not a terminal.
public struct ProgressLine: Sendable {
    public init() {}

    /// One line: who is connected, rates since the previous snapshot, latency and errors.
    /// - Parameter seconds: the time between `previous` and `now`.
    public func render(now: FleetStats.Snapshot, previous: FleetStats.Snapshot, seconds: Double, elapsed: Double) -> String {
        let span = max(seconds, 0.001)
        let positionsPerSecond = Double(now.published - previous.published) / span
        let deliveriesPerSecond = Double(now.deliveries - previous.deliveries) / span
        var parts = [
            "\(Self.clock(elapsed))",
            "connected \(now.volunteersOnline) vol \(now.donorsOnline) donors",
            String(format: "positions/s %.1f", positionsPerSecond),
            String(format: "deliveries/s %.1f", deliveriesPerSecond),
            "p50 \(Self.milliseconds(now.latency.p50)) p99 \(Self.milliseconds(now.latency.p99))",
            "delivered \(now.delivered) cancelled \(now.cancelled)",
            "errors \(now.errors + now.lost)",
        ]
        if now.rateLimited > 0 { parts.append("RATE-LIMITED \(now.rateLimited)") }
        return parts.joined(separator: " | ")
    }

    /// `mm:ss`.
    static func clock(_ seconds: Double) -> String {
        let whole = max(0, Int(seconds))
        return String(format: "%02d:%02d", whole / 60, whole % 60)
    }

    static func milliseconds(_ value: Double) -> String {
        value < 10 ? String(format: "%.2fms", value) : String(format: "%.0fms", value)
    }

    /// The line as a terminal shows it in place: carriage return, the line cut to `width`, clear to the end.
    public func inPlace(_ line: String, width: Int) -> String {
        let cut = line.count > width && width > 1 ? String(line.prefix(width - 1)) : line
        return "\r" + cut + "\u{1B}[K"
    }
}
