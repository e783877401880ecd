import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a command to completion with `posix_spawn` and `waitpid`, for commands that leave a daemon behind
/// (tmux, `pg_ctl start`) and for short tools (openssl).
///
/// Foundation's `Process` on Linux learns that a child ended only when every holder of a descriptor it hands
/// the child has closed it; a daemon the child forks keeps it, and `waitUntilExit` never returns. Here the
/// child's descriptors above stderr are closed and the child is reaped directly, by a `waitpid` on a thread of
/// its own (never on the cooperative pool), and killed once its time is up.
enum ChildProcess {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The command did not end within its deadline, and was killed.
    struct TimedOut: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `executable` with `arguments` and returns its exit status and output (stdout and stderr together).
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        timeout: Duration = .seconds(60)
    ) async throws -> (status: Int32, output: String) {
        let child = try Spawned(executable, arguments, environment: environment)
        defer { child.discard() }
        let status: Int32
        do {
            status = try await blocking("\(child.command) to finish", deadline: .now + timeout) { child.reap() }
        } catch {
            kill(child.pid, SIGKILL)  // the waiting thread reaps it
            throw TimedOut(description: "\(child.command) did not finish within \(timeout)")
        }
        return (status, child.output())
    }

    /// Runs the command and throws with its output unless it exits 0.
    @discardableResult
    static func check(
        _ executable: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        timeout: Duration = .seconds(60)
    ) async throws -> String {
        let (status, output) = try await run(executable, arguments, environment: environment, timeout: timeout)
        guard status == 0 else { throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) exited \(status): \(output)") }
        return output
    }

    /// Runs the command to completion on the calling thread: only for `atexit` handlers, where nothing is async.
    static func runAtExit(_ executable: String, _ arguments: [String]) {
        guard let child = try? Spawned(executable, arguments, environment: ProcessInfo.processInfo.environment) else { return }
        _ = child.reap()
        child.discard()
    }

    /// A started child, its output going to a temporary file.
    private struct Spawned: Sendable {
        let pid: pid_t
        let command: String
        let outputPath: String

        init(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
            outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString).out").path
            command = ([executable] + arguments).joined(separator: " ")
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
            pid = try withCStrings(argv) { argvPointers in
                try withCStrings(envp) { envPointers in
                    var pid: pid_t = 0
                    let status = posix_spawn(&pid, executable, &actions, nil, argvPointers, envPointers)
                    guard status == 0 else { throw Failure(description: "\(executable) could not be started: \(String(cString: strerror(status)))") }
                    return pid
                }
            }
        }

        /// Waits for the child to end (blocking: call it off the cooperative pool) and returns its exit status.
        func reap() -> Int32 {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            // WIFEXITED / WEXITSTATUS, which Swift does not import.
            return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        }

        func output() -> String {
            (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        }

        func discard() {
            try? FileManager.default.removeItem(atPath: outputPath)
        }
    }
}

/// Calls `body` with a NULL-terminated C array of `strings`.
private func withCStrings<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) throws -> Result) rethrows -> Result {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return try body(pointers)
}
