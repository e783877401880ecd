import FleetSimulation
import Foundation

/// Reads a process's CPU time and resident memory from `/proc` (Linux), to tell what the broker spends.
///
/// CPU time is `utime + stime` of `/proc/PID/stat` (fields 14 and 15, in clock ticks); memory is `VmRSS` of
/// `/proc/PID/status`.
public struct ProcSampler: Sendable {
    /// One reading.
    public struct Sample: Codable, Sendable, Equatable {
        /// User plus system CPU time, in seconds.
        public var cpuSeconds: Double
        /// Resident set size, in KiB.
        public var rssKB: Int
    }

    public let pid: Int32

    public init(pid: Int32) {
        self.pid = pid
    }

    /// Reads the process now.
    /// - Throws: ``SimulationError`` when the process does not exist or `/proc` cannot be read.
    public func sample() throws -> Sample {
        let stat: String, status: String
        do {
            stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        } catch {
            throw SimulationError("cannot read /proc/\(pid): is the broker's pid right? (\(error.localizedDescription))")
        }
        guard let cpu = Self.cpuTicks(stat: stat), let rss = Self.residentKB(status: status) else {
            throw SimulationError("cannot understand /proc/\(pid)/stat or status")
        }
        return Sample(cpuSeconds: Double(cpu) / Double(Self.ticksPerSecond), rssKB: rss)
    }

    /// Clock ticks per second (`sysconf(_SC_CLK_TCK)`, 100 on Linux).
    static let ticksPerSecond: Int = {
        let ticks = sysconf(Int32(_SC_CLK_TCK))
        return ticks > 0 ? ticks : 100
    }()

    /// `utime + stime` from the text of `/proc/PID/stat`. The command name (field 2) may hold spaces and
    /// parentheses, so fields are counted from the last `)`.
    static func cpuTicks(stat: String) -> Int? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        // fields[0] is field 3 (state), so utime (14) is fields[11] and stime (15) fields[12].
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// `VmRSS` in KiB from the text of `/proc/PID/status`.
    static func residentKB(status: String) -> Int? {
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if parts.count >= 2 { return Int(parts[1]) }
        }
        return nil
    }
}

