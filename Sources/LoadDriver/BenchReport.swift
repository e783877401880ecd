import FleetSimulation
import Foundation

/// The result of one bench run: the machine, the command, the parameters and the figures. Written as JSON
/// with `--report`, and printed as text.
public struct BenchReport: Codable, Sendable {
    public struct Machine: Codable, Sendable {
        public var cores: Int
        public var memoryGiB: Double
        public var kernel: String

        /// This machine.
        public static func current() -> Machine {
            let info = ProcessInfo.processInfo
            let kernel = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? info.operatingSystemVersionString
            return Machine(
                cores: info.activeProcessorCount, memoryGiB: (Double(info.physicalMemory) / 1_073_741_824 * 10).rounded() / 10, kernel: kernel)
        }
    }

    public struct Parameters: Codable, Sendable {
        public var scenario: BenchScenario
        public var connections: Int?
        public var pairs: Int?
        public var rate: Double?
        public var watchers: Int?
        public var positions: Int?
        public var volunteers: Int?
        public var interval: Double?
        public var duration: Double?
        public var procs: Int
        public var sourceAddresses: [String]
    }

    public struct Results: Codable, Sendable {
        /// Connections up and ready (subscribed, for donors) before the load.
        public var connections = 0
        public var connectFailures = 0
        /// Connect storm: seconds from the first handshake to the last, and the rate.
        public var connectSeconds: Double?
        public var connectionsPerSecond: Double?
        /// From the TCP connect to the `welcome` frame.
        public var connectLatency: LatencySummary?
        public var published = 0
        /// Publishes the broker refused, by error code.
        public var publishErrors: [String: Int] = [:]
        public var expectedDeliveries = 0
        public var deliveries = 0
        public var deliveriesPerSecond: Double?
        /// Expected deliveries that never arrived.
        public var lost = 0
        /// Seqs skipped within one subscription (conflation or loss).
        public var gaps = 0
        public var duplicates = 0
        /// Publish to delivery, in milliseconds.
        public var latency: LatencySummary?
        /// The same, second by second of send time: whether the tail is even or comes in bursts.
        public var latencyBySecond: LatencyBySecond?
        public var closedByServer = 0
        /// Every `error` frame and failure by code.
        public var errors: [String: Int] = [:]
        public var firstFailure: String?

        public init() {}
    }

    public struct BrokerUsage: Codable, Sendable {
        public var pid: Int32
        public var rssBeforeKB: Int
        public var rssConnectedKB: Int
        public var rssAfterKB: Int
        /// Resident memory added per connection held.
        public var kbPerConnection: Double?
        /// CPU seconds (user + system) during the load phase.
        public var cpuSeconds: Double
        /// Cores kept busy on average during the load phase.
        public var cpuCores: Double
        public var cpuMicrosecondsPerDelivery: Double?
        public var cpuMicrosecondsPerConnection: Double?
    }

    public var tool = "tracker-sim bench"
    /// The server measured: `broker` or `baseline` (the figures under ``broker`` are then the baseline's).
    public var target = BenchServer.broker
    public var startedAt: String
    public var command: String
    public var machine: Machine
    public var parameters: Parameters
    /// Seconds of the load phase as measured by the coordinator.
    public var loadSeconds: Double
    public var results: Results
    /// The measured server's CPU and memory (the baseline's, when ``target`` is `baseline`).
    public var broker: BrokerUsage?
    /// The baseline's figures for the same scenario in the same run and the broker's ratios to them, added by
    /// `tracker-sim bench-compare` (scripts/bench) to the broker's report.
    public var baseline: BenchComparison?

    /// Whether nothing was lost and no connection failed.
    public var passed: Bool { results.lost == 0 && results.connectFailures == 0 && results.duplicates == 0 }

    /// Pretty-printed JSON with sorted keys.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// The report as text, for the terminal and docs/BENCHMARKS.md.
    public var text: String {
        let r = results
        let on = target == .broker ? "" : " (\(target.rawValue) server)"
        var lines = ["\(parameters.scenario.rawValue)\(on): \(describeParameters())"]
        lines.append("  machine      \(machine.cores) cores, \(fmt(machine.memoryGiB)) GiB, Linux \(machine.kernel)")
        var connected = "  connections  \(r.connections) ready, \(r.connectFailures) failed"
        if let seconds = r.connectSeconds, let rate = r.connectionsPerSecond {
            connected += ", storm \(fmt(seconds)) s = \(fmt(rate)) connections/s"
        }
        lines.append(connected)
        if let handshake = r.connectLatency, handshake.count > 0 {
            let end = target == .broker ? "welcome" : "upgrade"
            lines.append("  handshake    p50 \(fmt(handshake.p50)) ms, p99 \(fmt(handshake.p99)) ms, max \(fmt(handshake.max)) ms (TCP connect to \(end))")
        }
        if r.published > 0 || r.expectedDeliveries > 0 {
            let refused = r.publishErrors.isEmpty ? "none refused" : r.publishErrors.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            lines.append("  published    \(r.published) positions in \(fmt(loadSeconds)) s (\(refused))")
            lines.append(
                "  deliveries   \(r.deliveries) of \(r.expectedDeliveries) expected, \(fmt(r.deliveriesPerSecond ?? 0))/s; lost \(r.lost), gaps \(r.gaps), duplicates \(r.duplicates)")
        }
        if let latency = r.latency, latency.count > 0 {
            lines.append(
                "  latency      p50 \(fmt(latency.p50)) ms, p90 \(fmt(latency.p90)) ms, p99 \(fmt(latency.p99)) ms, p99.9 \(fmt(latency.p999)) ms, max \(fmt(latency.max)) ms")
        }
        if let bySecond = r.latencyBySecond, !bySecond.seconds.isEmpty {
            lines.append(
                "  by second    p99 median \(fmt(bySecond.medianP99)) ms, highest \(fmt(bySecond.highestP99)) ms (second \(bySecond.highestSecond)); "
                    + "\(bySecond.burstSeconds) of \(bySecond.seconds.count) seconds above twice the median")
        }
        if let broker {
            let who = target == .broker ? "broker" : "server"
            var memory = "  \(who) RSS   \(broker.rssBeforeKB / 1024) MiB before, \(broker.rssConnectedKB / 1024) MiB connected, \(broker.rssAfterKB / 1024) MiB after"
            if let perConnection = broker.kbPerConnection { memory += "; \(fmt(perConnection)) KB per connection" }
            lines.append(memory)
            var cpu = "  \(who) CPU   \(fmt(broker.cpuSeconds)) s (\(fmt(broker.cpuCores)) cores busy)"
            if let perDelivery = broker.cpuMicrosecondsPerDelivery { cpu += "; \(fmt(perDelivery)) µs per delivery" }
            if let perConnection = broker.cpuMicrosecondsPerConnection { cpu += "; \(fmt(perConnection)) µs per connection" }
            lines.append(cpu)
        }
        let errors = r.errors.filter { $0.key != "rate-limited" || r.publishErrors["rate-limited"] == nil }
        if !errors.isEmpty {
            lines.append("  errors       " + errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if let first = r.firstFailure { lines.append("  first error  \(first)") }
        if let baseline { lines.append("  vs baseline  \(baseline.summary)") }
        lines.append(passed ? "  result       OK" : "  result       LOSSES OR FAILURES (see above)")
        return lines.joined(separator: "\n")
    }

    private func describeParameters() -> String {
        let p = parameters
        var parts: [String] = []
        if let connections = p.connections { parts.append("\(connections) connections") }
        if let pairs = p.pairs { parts.append("\(pairs) pairs") }
        if let volunteers = p.volunteers { parts.append("\(volunteers) volunteer/donor pairs") }
        if let watchers = p.watchers { parts.append("\(watchers) watchers") }
        if let positions = p.positions { parts.append("\(positions) positions") }
        if let rate = p.rate { parts.append("\(fmt(rate)) positions/s") }
        if let interval = p.interval { parts.append("a fix every \(fmt(interval)) s") }
        if let duration = p.duration { parts.append("\(fmt(duration)) s") }
        parts.append(p.procs == 0 ? "one worker in-process" : "\(p.procs) worker process(es)")
        if !p.sourceAddresses.isEmpty { parts.append("from \(p.sourceAddresses.joined(separator: ", "))") }
        return parts.joined(separator: ", ")
    }

    private func fmt(_ value: Double) -> String {
        if value >= 100 { return String(Int(value.rounded())) }
        if value >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }
}
