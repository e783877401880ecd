import FleetSimulation
import Foundation

/// A broker report set against the baseline's report of the same scenario, measured in the same run: both sets of
/// figures and the broker's ratios to the baseline's (docs/BENCHMARKS.md, "Baseline").
///
/// Every ratio is broker ÷ baseline. For costs (CPU, latency, memory) above 1 means the broker costs that many
/// times the transport's own; for connections per second below 1 means the broker is slower. A ratio is `nil`
/// when either side lacks the figure.
public struct BenchComparison: Codable, Sendable, Equatable {
    /// The figures of one side that the ratios are taken from.
    public struct Figures: Codable, Sendable, Equatable {
        public var connections: Int
        public var deliveries: Int
        public var lost: Int
        public var passed: Bool
        public var deliveriesPerSecond: Double?
        /// Publish to delivery, milliseconds.
        public var latencyP50: Double?
        public var latencyP99: Double?
        /// The median of the run's seconds' p99s (``LatencyBySecond``): the tail without the seconds the machine
        /// was busy elsewhere.
        public var latencyP99MedianSecond: Double?
        public var cpuMicrosecondsPerDelivery: Double?
        public var cpuMicrosecondsPerConnection: Double?
        public var connectionsPerSecond: Double?
        public var kbPerConnection: Double?

        public init(_ report: BenchReport) {
            let r = report.results
            connections = r.connections
            deliveries = r.deliveries
            lost = r.lost
            passed = report.passed
            deliveriesPerSecond = r.deliveriesPerSecond
            latencyP50 = r.latency.map(\.p50)
            latencyP99 = r.latency.map(\.p99)
            latencyP99MedianSecond = r.latencyBySecond.flatMap { $0.seconds.isEmpty ? nil : $0.medianP99 }
            cpuMicrosecondsPerDelivery = report.broker?.cpuMicrosecondsPerDelivery
            cpuMicrosecondsPerConnection = report.broker?.cpuMicrosecondsPerConnection
            connectionsPerSecond = r.connectionsPerSecond
            kbPerConnection = report.broker?.kbPerConnection
        }
    }

    /// The broker's ratios to the baseline.
    public struct Ratios: Codable, Sendable, Equatable {
        public var cpuPerDelivery: Double?
        public var cpuPerConnection: Double?
        public var latencyP99: Double?
        public var latencyP99MedianSecond: Double?
        public var kbPerConnection: Double?
        public var connectionsPerSecond: Double?
    }

    public var scenario: BenchScenario
    /// The scenario's sizes in a few words (`200 pairs, 2000 positions/s`).
    public var sizes: String
    public var broker: Figures
    public var baseline: Figures
    public var ratios: Ratios

    /// Compares two reports of one scenario.
    /// - Throws: ``SimulationError`` when they are not a broker report and a baseline report of the same scenario.
    public init(broker: BenchReport, baseline: BenchReport) throws {
        guard broker.target == .broker, baseline.target == .baseline else {
            throw SimulationError("compare a broker report with a baseline report (got \(broker.target.rawValue) and \(baseline.target.rawValue))")
        }
        guard broker.parameters.scenario == baseline.parameters.scenario else {
            throw SimulationError("the reports are of different scenarios: \(broker.parameters.scenario.rawValue), \(baseline.parameters.scenario.rawValue)")
        }
        scenario = broker.parameters.scenario
        sizes = Self.sizes(broker.parameters)
        self.broker = Figures(broker)
        self.baseline = Figures(baseline)
        let a = self.broker, b = self.baseline
        ratios = Ratios(
            cpuPerDelivery: Self.ratio(a.cpuMicrosecondsPerDelivery, b.cpuMicrosecondsPerDelivery),
            cpuPerConnection: Self.ratio(a.cpuMicrosecondsPerConnection, b.cpuMicrosecondsPerConnection),
            latencyP99: Self.ratio(a.latencyP99, b.latencyP99),
            latencyP99MedianSecond: Self.ratio(a.latencyP99MedianSecond, b.latencyP99MedianSecond),
            kbPerConnection: Self.ratio(a.kbPerConnection, b.kbPerConnection),
            connectionsPerSecond: Self.ratio(a.connectionsPerSecond, b.connectionsPerSecond))
    }

    static func sizes(_ p: BenchReport.Parameters) -> String {
        func n(_ value: Int?) -> String { value.map(String.init) ?? "?" }
        func d(_ value: Double?) -> String { value.map(format) ?? "?" }
        switch p.scenario {
        case .idle: return "\(n(p.connections)) connections held \(d(p.duration)) s"
        case .pairs: return "\(n(p.pairs)) pairs, \(d(p.rate)) positions/s, \(d(p.duration)) s"
        case .fanout: return "\(n(p.watchers)) watchers × \(n(p.positions)) positions at \(d(p.rate))/s"
        case .fleet: return "\(n(p.volunteers)) pairs, a fix every \(d(p.interval)) s, \(d(p.duration)) s"
        case .connect: return "\(n(p.connections)) new connections"
        }
    }

    /// `a / b` to two decimals, or `nil` when either is missing or `b` is not positive.
    static func ratio(_ a: Double?, _ b: Double?) -> Double? {
        guard let a, let b, b > 0, a.isFinite else { return nil }
        return (a / b * 100).rounded() / 100
    }

    /// One line for the text report: the ratios that exist.
    public var summary: String {
        var parts: [String] = []
        if let x = ratios.cpuPerDelivery { parts.append("CPU per delivery ×\(Self.format(x))") }
        if let x = ratios.cpuPerConnection { parts.append("CPU per connection ×\(Self.format(x))") }
        if let x = ratios.latencyP99 { parts.append("p99 ×\(Self.format(x))") }
        if let x = ratios.latencyP99MedianSecond { parts.append("median second's p99 ×\(Self.format(x))") }
        if let x = ratios.kbPerConnection { parts.append("KB per connection ×\(Self.format(x))") }
        if let x = ratios.connectionsPerSecond { parts.append("connections/s ×\(Self.format(x))") }
        return parts.isEmpty ? "no figure to compare" : parts.joined(separator: ", ")
    }

    /// The Markdown table of docs/BENCHMARKS.md's "Baseline" section: one row per scenario.
    public static func table(_ comparisons: [BenchComparison]) -> String {
        var lines = [
            "| Scenario | Server CPU, µs per delivery: broker / baseline / × | p99 latency, ms: broker / baseline / × | KB per connection: broker / baseline / × | Lost: broker / baseline |",
            "|---|---|---|---|---|",
        ]
        for c in comparisons {
            let cpu: String
            if c.scenario == .connect {
                cpu = triple(c.broker.cpuMicrosecondsPerConnection, c.baseline.cpuMicrosecondsPerConnection, c.ratios.cpuPerConnection) + " (per connection)"
            } else {
                cpu = triple(c.broker.cpuMicrosecondsPerDelivery, c.baseline.cpuMicrosecondsPerDelivery, c.ratios.cpuPerDelivery)
            }
            let latency = triple(c.broker.latencyP99, c.baseline.latencyP99, c.ratios.latencyP99)
            let memory = triple(c.broker.kbPerConnection, c.baseline.kbPerConnection, c.ratios.kbPerConnection)
            let lost = c.broker.expectsDeliveries || c.baseline.expectsDeliveries ? "\(c.broker.lost) / \(c.baseline.lost)" : "—"
            lines.append("| \(c.scenario.rawValue), \(c.sizes) | \(cpu) | \(latency) | \(memory) | \(lost) |")
        }
        return lines.joined(separator: "\n")
    }

    private static func triple(_ broker: Double?, _ baseline: Double?, _ ratio: Double?) -> String {
        guard broker != nil || baseline != nil else { return "—" }
        return "\(broker.map(format) ?? "—") / \(baseline.map(format) ?? "—") / " + (ratio.map { "**×\(format($0))**" } ?? "—")
    }

    static func format(_ value: Double) -> String {
        if value >= 100 { return String(Int(value.rounded())) }
        if value >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    /// Replaces what lies between `begin` and `end` in `document` with `body` (the markers stay).
    /// - Returns: the new document, or `nil` when the markers are missing or out of order.
    public static func replacingSection(of document: String, begin: String, end: String, with body: String) -> String? {
        guard let start = document.range(of: begin), let stop = document.range(of: end, range: start.upperBound..<document.endIndex) else {
            return nil
        }
        return String(document[..<start.upperBound]) + "\n" + body + "\n" + String(document[stop.lowerBound...])
    }
}

extension BenchComparison.Figures {
    /// Whether the scenario counts deliveries at all (idle and connect do not).
    var expectsDeliveries: Bool { deliveries > 0 || lost > 0 }
}
