import FleetSimulation
import Foundation

/// The coordinator's line to one bench worker: commands down, messages up.
public protocol WorkerLink: Sendable {
    /// Sends a command to the worker.
    func send(_ command: WorkerCommand)
    /// Stops the worker at once (after a timeout).
    func terminate()
    /// Waits for the worker to end.
    func wait() async
}

/// A worker in a child process: `tracker-sim worker`, with the plan as the first line of its standard input and
/// JSON lines on its standard output.
public final class ProcessWorkerLink: WorkerLink {
    private let process: Process
    private let input: FileHandle

    /// Spawns `executable worker`, sends it `plan`, and forwards each message it prints to `messages`.
    public init(
        executable: String, plan: WorkerPlan, environment: [String: String], messages: AsyncStream<WorkerMessage>.Continuation
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["worker"]
        process.environment = environment
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.standardError
        do {
            try process.run()
        } catch {
            throw SimulationError("cannot start the bench worker \(executable): \(error.localizedDescription)")
        }
        self.process = process
        self.input = stdin.fileHandleForWriting
        let output = stdout.fileHandleForReading
        let worker = plan.worker
        let reader = Thread {
            var pending = Data()
            while true {
                let chunk = output.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = pending[pending.startIndex..<newline]
                    pending = Data(pending[pending.index(after: newline)...])
                    if let message = try? JSONDecoder().decode(WorkerMessage.self, from: line) {
                        messages.yield(message)
                    } else if !line.isEmpty {
                        messages.yield(WorkerMessage(kind: .failed, worker: worker, message: "unreadable line: \(String(decoding: line.prefix(200), as: UTF8.self))"))
                    }
                }
                if pending.count > 16 << 20 {
                    messages.yield(WorkerMessage(kind: .failed, worker: worker, message: "a line longer than 16 MiB"))
                    break
                }
            }
        }
        reader.start()
        let planLine = try JSONEncoder().encode(plan) + Data("\n".utf8)
        input.write(planLine)
    }

    public func send(_ command: WorkerCommand) {
        input.write(Data((command.rawValue + "\n").utf8))
    }

    public func terminate() {
        if process.isRunning { process.terminate() }
    }

    public func wait() async {
        while process.isRunning { try? await Task.sleep(for: .milliseconds(50)) }
    }
}

/// A worker in this process, for tests and for `--procs 0`.
public final class InProcessWorkerLink: WorkerLink {
    private let commands: AsyncStream<WorkerCommand>.Continuation
    private let task: Task<Void, Never>

    public init(plan: WorkerPlan, secret: String, messages: AsyncStream<WorkerMessage>.Continuation) {
        let (stream, commands) = AsyncStream.makeStream(of: WorkerCommand.self, bufferingPolicy: .bufferingNewest(16))
        self.commands = commands
        let worker = LoadWorker(plan: plan, secret: secret) { messages.yield($0) }
        self.task = Task { await worker.run(commands: stream) }
    }

    public func send(_ command: WorkerCommand) {
        commands.yield(command)
    }

    public func terminate() {
        commands.finish()
        task.cancel()
    }

    public func wait() async {
        await task.value
    }
}
