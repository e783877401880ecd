import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private tmux server for one test: a terminal the full-screen watcher can draw into and the test can read.
///
/// tmux is started with `posix_spawn`, not Foundation's `Process`: the first command forks the tmux server, and
/// `Process` on Linux learns that a child ended only when every holder of a descriptor it hands the child has
/// closed it, which a long-lived tmux server never does. Here each command's descriptors above stderr are closed
/// and the command is reaped with `waitpid`, so nothing the server inherits can block the test.
struct Tmux {
    /// The `-L` socket name, unique per test so no other tmux server is touched.
    let socket = "lb-test-\(UUID().uuidString.prefix(8))"

    /// Runs `tmux <arguments>` on this server and returns its output (stdout and stderr).
    @discardableResult
    func run(_ arguments: [String], timeout: Duration = .seconds(10)) throws -> String {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Swift's Glibc module does not export posix_spawn_file_actions_addclosefrom_np; close them one by one.
        for descriptor in Self.openDescriptors() where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }

        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = "xterm-256color"  // the caller may have no terminal at all (CI)
        environment.removeValue(forKey: "TMUX")
        let argv = ["tmux", "-L", socket, "-f", "/dev/null"] + arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }

        let pid = try withCStrings(argv) { argvPointers in
            try withCStrings(envp) { envPointers in
                var pid: pid_t = 0
                let status = posix_spawn(&pid, "/usr/bin/tmux", &actions, nil, argvPointers, envPointers)
                guard status == 0 else { throw BrokerProcessError("tmux could not be started: \(String(cString: strerror(status)))") }
                return pid
            }
        }

        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            guard ContinuousClock.now < deadline else {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw BrokerProcessError("tmux \(arguments.first ?? "") did not finish within \(timeout)")
            }
            usleep(10_000)
        }
        return (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    }

    /// The descriptors open in this process now.
    private static func openDescriptors() -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { Int32($0) }
    }

    /// Ends the server and everything running in its panes.
    ///
    /// `kill-server` alone is not enough: the server hangs up the panes' terminals and then waits for their
    /// processes, which may outlive it, so the panes' process groups and the server are killed outright.
    func killServer() {
        let panes = (try? run(["list-panes", "-a", "-F", "#{pid} #{pane_pid} #{socket_path}"])) ?? ""
        for line in panes.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count == 3, let server = pid_t(fields[0]), let pane = pid_t(fields[1]) else { continue }
            kill(-pane, SIGKILL)  // the pane's shell leads its own process group
            kill(server, SIGKILL)
            unlink(String(fields[2]))  // a killed server leaves its socket behind
        }
    }
}

/// Calls `body` with a NULL-terminated C array of `strings`.
private func withCStrings<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) throws -> Result) rethrows -> Result {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return try body(pointers)
}
