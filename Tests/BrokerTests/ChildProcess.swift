import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a command to completion with `posix_spawn` and `waitpid`, for commands that leave a daemon behind
/// (tmux, `pg_ctl start`).
///
/// Foundation's `Process` on Linux learns that a child ended only when every holder of a descriptor it hands
/// the child has closed it; a daemon the child forks keeps it, and `waitUntilExit` never returns. Here the
/// child's descriptors above stderr are closed and the child is reaped directly.
enum ChildProcess {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `executable` with `arguments` and returns its exit status and output (stdout and stderr together).
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        timeout: Duration = .seconds(60)
    ) throws -> (status: Int32, output: String) {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Swift's Glibc module does not export posix_spawn_file_actions_addclosefrom_np; close them one by one.
        let descriptors = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
        for descriptor in descriptors where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }

        let argv = [executable] + arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }
        let pid = try withCStrings(argv) { argvPointers in
            try withCStrings(envp) { envPointers in
                var pid: pid_t = 0
                let status = posix_spawn(&pid, executable, &actions, nil, argvPointers, envPointers)
                guard status == 0 else { throw Failure(description: "\(executable) could not be started: \(String(cString: strerror(status)))") }
                return pid
            }
        }

        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            guard ContinuousClock.now < deadline else {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw Failure(description: "\(argv.joined(separator: " ")) did not finish within \(timeout)")
            }
            usleep(10_000)
        }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (exitStatus, output)
    }

    /// Runs the command and throws with its output unless it exits 0.
    @discardableResult
    static func check(_ executable: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment, timeout: Duration = .seconds(60)) throws -> String {
        let (status, output) = try run(executable, arguments, environment: environment, timeout: timeout)
        guard status == 0 else { throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) exited \(status): \(output)") }
        return output
    }
}

/// Calls `body` with a NULL-terminated C array of `strings`.
private func withCStrings<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) throws -> Result) rethrows -> Result {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return try body(pointers)
}
