import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private tmux server for one test: a terminal the full-screen watcher can draw into and the test can read.
///
/// tmux runs through ``ChildProcess``, not Foundation's `Process`: the first command forks the tmux server, which
/// would keep `Process` from ever seeing the command end.
struct Tmux: Sendable {
    /// The `-L` socket name, unique per test so no other tmux server is touched.
    let socket = "lb-test-\(UUID().uuidString.prefix(8))"

    /// Runs `tmux <arguments>` on this server and returns its output (stdout and stderr).
    @discardableResult
    func run(_ arguments: [String], timeout: Duration = .seconds(10)) async throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = "xterm-256color"  // the caller may have no terminal at all (CI)
        environment.removeValue(forKey: "TMUX")
        return try await ChildProcess.run("/usr/bin/tmux", ["-L", socket, "-f", "/dev/null"] + arguments, environment: environment, timeout: timeout).output
    }

    /// Ends the server and everything running in its panes.
    ///
    /// `kill-server` alone is not enough: the server hangs up the panes' terminals and then waits for their
    /// processes, which may outlive it, so the panes' process groups and the server are killed outright.
    func killServer() async {
        let panes = (try? await run(["list-panes", "-a", "-F", "#{pid} #{pane_pid} #{socket_path}"])) ?? ""
        for line in panes.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count == 3, let server = pid_t(fields[0]), let pane = pid_t(fields[1]) else { continue }
            kill(-pane, SIGKILL)  // the pane's shell leads its own process group
            kill(server, SIGKILL)
            unlink(String(fields[2]))  // a killed server leaves its socket behind
        }
    }
}
