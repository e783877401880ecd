import ArgumentParser
import FleetSimulation
import Foundation
import LoadDriver
import NIOConcurrencyHelpers

/// `tracker-sim worker` (hidden): one bench worker process, started by `tracker-sim bench`.
///
/// Reads its plan as the first line of standard input and then commands (`go`, `close`), one per line; writes
/// JSON lines on standard output. The JWT secret comes from LOCATION_BROKER_JWT_SECRET (the baseline needs none).
struct WorkerSubcommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker", abstract: "A bench worker process (started by tracker-sim bench).", shouldDisplay: false)

    func run() async throws {
        let writer = LineWriter()
        guard let line = readLine(), let plan = try? JSONDecoder().decode(WorkerPlan.self, from: Data(line.utf8)) else {
            writer.emit(WorkerMessage(kind: .failed, worker: -1, message: "no readable plan on standard input"))
            throw ExitCode(2)
        }
        let secret = ProcessInfo.processInfo.environment["LOCATION_BROKER_JWT_SECRET"] ?? ""
        guard plan.server == .baseline || !secret.isEmpty else {
            writer.emit(WorkerMessage(kind: .failed, worker: plan.worker, message: "LOCATION_BROKER_JWT_SECRET is not set"))
            throw ExitCode(2)
        }
        let (commands, continuation) = AsyncStream.makeStream(of: LoadDriver.WorkerCommand.self, bufferingPolicy: .bufferingNewest(16))
        let reader = Thread {
            while let line = readLine() {
                if let command = LoadDriver.WorkerCommand(rawValue: line.trimmingCharacters(in: .whitespaces)) { continuation.yield(command) }
            }
            continuation.finish()
        }
        reader.start()
        await LoadWorker(plan: plan, secret: secret) { writer.emit($0) }.run(commands: commands)
    }
}

/// Writes whole JSON lines to standard output, one writer at a time.
final class LineWriter: Sendable {
    private let lock = NIOLockedValueBox(())

    func emit(_ message: WorkerMessage) {
        guard let data = try? JSONEncoder().encode(message) else { return }
        lock.withLockedValue { _ in FileHandle.standardOutput.write(data + Data("\n".utf8)) }
    }
}
