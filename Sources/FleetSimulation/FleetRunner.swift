import Atomics
import BrokerProtocol
import Foundation

/// Runs a simulated fleet against a broker: volunteers carry donations through Ponte's lifecycle with the
/// backend API and publish their fixes, donors watch and check what arrives, and a status line tells how it goes.
public struct FleetRunner: Sendable {
    public let configuration: FleetConfiguration
    public let output: FleetOutput
    private let stopSignal = StopSignal()

    public init(configuration: FleetConfiguration, output: FleetOutput) {
        self.configuration = configuration
        self.output = output
    }

    /// Asks a running fleet to wind down (as at the end of `--duration`): unfinished donations are deleted.
    public func stop() { stopSignal.fire() }

    /// Runs the fleet until the duration is over, every volunteer has done its rounds, or ``stop()``.
    /// - Throws: ``SimulationError`` when the run cannot start (bad settings, unreachable API, bad secret).
    public func run() async throws -> FleetSummary {
        if let problem = configuration.problem { throw SimulationError(problem) }
        let backend = try BackendClient(baseURL: configuration.apiURL, backendKey: configuration.backendKey)
        // Shut down on every path: its connections are not to outlive the run.
        do {
            let summary = try await run(backend: backend)
            await backend.shutdown()
            return summary
        } catch {
            await backend.shutdown()
            throw error
        }
    }

    private func run(backend: BackendClient) async throws -> FleetSummary {
        let minter = try await TokenMinter(secret: configuration.jwtSecret)
        let context = FleetContext(configuration: configuration, backend: backend, minter: minter, output: output)
        try await checkBackend(backend)
        announce()
        let started = ContinuousClock.now
        let stopSignal = stopSignal
        await withTaskGroup(of: Void.self) { group in
            let volunteers = Task {
                await withTaskGroup(of: Void.self) { fleet in
                    for index in 0..<configuration.volunteers {
                        fleet.addTask { await FleetVolunteer(index: index, context: context).run() }
                    }
                }
            }
            group.addTask {
                // The clock of the run: the duration, or a stop from outside.
                let deadline = ContinuousClock.now + .milliseconds(Int64(configuration.duration * 1000))
                while ContinuousClock.now < deadline && !stopSignal.isFired && !context.isStopping {
                    try? await Task.sleep(for: .milliseconds(100))
                    if volunteers.isCancelled { break }
                }
                context.stop()
            }
            group.addTask {
                await volunteers.value
                context.stop()
            }
            group.addTask {
                // A run that does not wind down says who is stuck where, once a minute after the stop.
                while true {
                    try? await Task.sleep(for: .seconds(1))
                    guard context.isStopping else { continue }
                    for _ in 0..<60 where !context.stillDoing.isEmpty { try? await Task.sleep(for: .seconds(1)) }
                    let stuck = context.stillDoing
                    if stuck.isEmpty { return }
                    let message = "the run did not wind down within a minute: "
                        + stuck.prefix(5).map { "volunteer \($0.index + 1) \($0.activity)" }.joined(separator: "; ")
                    context.stats.error(message)
                    context.output.line(message)
                }
            }
            group.addTask { await progress(context, since: started, until: volunteers) }
            await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return FleetSummary(
            runID: configuration.runID, seconds: seconds, volunteers: configuration.volunteers, stats: context.stats.snapshot(),
            errors: context.stats.errorMessages)
    }

    private func checkBackend(_ backend: BackendClient) async throws {
        do {
            _ = try await backend.get("fleet-\(configuration.runID)-probe")
        } catch let failure as BackendClient.Failure where failure.status == 401 {
            throw SimulationError("the broker refused the backend key (\(failure.message)); use the broker's LOCATION_BROKER_BACKEND_KEY")
        }
    }

    private func announce() {
        let c = configuration
        output.line(
            "Fleet \(c.runID): \(c.volunteers) volunteer(s) in \(c.area.name), a fix every \(FleetContext.seconds(c.interval)) of simulated time "
                + "(\(FleetContext.seconds(c.realInterval)) real at speedup \(c.speedup)), for up to \(SimDuration(seconds: c.duration))"
                + (c.rounds.map { ", \($0) donation(s) each" } ?? "") + (c.chaos ? ", with chaos" : "") + ", seed \(c.seed).")
        if c.neededPublishRate > 1 {
            let settings = c.brokerRateSettings
            output.line(
                "Note: each volunteer publishes \(String(format: "%.2g", c.neededPublishRate)) times a second, above the broker's default "
                    + "limit (1/s, burst 5): the broker needs LOCATION_BROKER_PUBLISH_RATE=\(settings.rate) "
                    + "LOCATION_BROKER_PUBLISH_BURST=\(settings.burst) or more, or publishes will be refused (rate-limited).")
        }
    }

    private func progress(_ context: FleetContext, since started: ContinuousClock.Instant, until volunteers: Task<Void, Never>) async {
        let line = ProgressLine()
        let period: Duration = output.isLive ? .milliseconds(500) : .seconds(5)
        var previous = context.stats.snapshot()
        var previousAt = ContinuousClock.now
        while !context.isStopping {
            try? await Task.sleep(for: .milliseconds(100))
            let now = ContinuousClock.now
            guard now - previousAt >= period, !context.isStopping else { continue }
            let snapshot = context.stats.snapshot()
            output.status(
                line.render(now: snapshot, previous: previous, seconds: Self.seconds(now - previousAt), elapsed: Self.seconds(now - started)))
            previous = snapshot
            previousAt = now
        }
        await volunteers.value
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// A one-shot flag that a signal handler or another task can fire.
final class StopSignal: Sendable {
    private let fired = ManagedAtomic<Bool>(false)

    func fire() { fired.store(true, ordering: .relaxed) }
    var isFired: Bool { fired.load(ordering: .relaxed) }
}
