import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The process's open file descriptors and their limit, read when `/metrics` is scraped, under the names
/// Prometheus' client libraries use: every WebSocket holds a descriptor, so the two together say how close
/// the broker is to refusing connections.
enum ProcessMetrics {
    /// `process_open_fds` and `process_max_fds` in Prometheus' text format; empty where they cannot be read.
    static func exposition() -> String {
        var text = ""
        if let open = openDescriptors() {
            text += "# HELP process_open_fds Number of open file descriptors.\n# TYPE process_open_fds gauge\nprocess_open_fds \(open)\n"
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            text += "# HELP process_max_fds Maximum number of open file descriptors.\n# TYPE process_max_fds gauge\nprocess_max_fds \(limit.rlim_cur)\n"
        }
        return text
    }

    /// Counts the entries of /proc/self/fd (Linux); `nil` elsewhere.
    private static func openDescriptors() -> Int? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        // The listing holds a descriptor of its own while it runs.
        return max(0, entries.count - 1)
    }
}
