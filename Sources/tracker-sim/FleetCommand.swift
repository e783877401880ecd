import ArgumentParser
import Atomics
import Dispatch
import FleetSimulation
import Foundation

/// `tracker-sim fleet`: volunteers drive donations through Ponte's lifecycle while donors watch and check.
struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Run a simulated fleet of volunteers and donors against a broker.",
        discussion: """
            Each volunteer takes one donation at a time: the donation is created through the backend API, a \
            volunteer is assigned, drives to the donor's home along street-like legs at 20-40 km/h, the hand-over \
            pauses tracking, then the volunteer drives to an institution of the area and the donation is \
            delivered. Some donations are cancelled or lose their volunteer on the way. Each donor watches while \
            the donation is trackable and checks every frame: no seq gap, nothing outside the trackable window, \
            arrivals at the right place. At the end of --duration (or on Ctrl-C) unfinished donations are deleted \
            and a summary is printed.

            Volunteers publish every --interval of simulated time, that is every interval / --speedup seconds. \
            Above one publish a second per volunteer the broker's default rate limit refuses them: start the \
            broker with LOCATION_BROKER_PUBLISH_RATE and LOCATION_BROKER_PUBLISH_BURST raised (the fleet prints \
            the values it needs).

            Exit status: 0 every delivery was expected and none was lost; 1 a position was lost, arrived where \
            it should not, was rate-limited, or a protocol error happened; 2 the run could not start.
            """
    )

    @OptionGroup var broker: BrokerOptions

    @Option(help: "How many volunteers drive at once.")
    var volunteers = 10

    @Option(help: "Simulated time between a volunteer's fixes (Ponte's app: 20s).")
    var interval = "20s"

    @Option(help: "How much faster than real time the fleet lives.")
    var speedup = 1.0

    @Option(help: "How long the run lasts, in real time.")
    var duration = "10m"

    @Option(help: "Donations per volunteer (default: as many as fit in --duration).")
    var rounds: Int?

    @Option(help: "Seed of the random choices: the same seed replays the same fleet.")
    var seed: UInt64 = 42

    @Option(help: "The area file: bounds, institutions, street names.")
    var area = "config/areas/buenos-aires.yaml"

    @Flag(help: "Drop and restore connections at random, as mobile networks do.")
    var chaos = false

    @Flag(help: "Plain periodic lines instead of the live status line (the default when output is not a terminal).")
    var plain = false

    func run() async throws {
        let secrets = try broker.secrets()
        let loaded: Area
        do {
            loaded = try Area.load(path: area)
        } catch {
            throw ValidationError("\(error)")
        }
        var configuration = FleetConfiguration(
            webSocketURL: try broker.webSocketURL(), apiURL: try broker.apiURL(), backendKey: secrets.backendKey, jwtSecret: secrets.jwtSecret,
            volunteers: volunteers, area: loaded)
        configuration.interval = try seconds(interval, option: "--interval")
        configuration.speedup = speedup
        configuration.duration = try seconds(duration, option: "--duration")
        configuration.rounds = rounds
        configuration.seed = seed
        configuration.chaos = chaos
        if let problem = configuration.problem { throw ValidationError(problem) }

        let console = Console(plain: plain)
        let runner = FleetRunner(configuration: configuration, output: console.fleetOutput)
        let interrupts = Interrupts.install {
            console.line("Stopping: deleting unfinished donations (Ctrl-C again to quit at once)...")
            runner.stop()
        }
        let summary: FleetSummary
        do {
            summary = try await runner.run()
        } catch let error as SimulationError {
            console.line("tracker-sim: \(error.description)")
            throw ExitCode(2)
        }
        withExtendedLifetime(interrupts) {}
        console.line(summary.text)
        if !summary.passed { throw ExitCode(1) }
    }
}

/// Ctrl-C once asks the run to wind down; twice quits at once (130).
enum Interrupts {
    private final class Count: Sendable {
        let value = ManagedAtomic<Int>(0)
    }

    /// Installs the handler; keep the returned source alive for as long as it should run.
    static func install(_ first: @escaping @Sendable () -> Void) -> any DispatchSourceSignal {
        // The default action must be off, or the process would die before the source sees the signal.
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let count = Count()
        source.setEventHandler {
            if count.value.wrappingIncrementThenLoad(by: 1, ordering: .relaxed) == 1 {
                first()
            } else {
                exit(130)
            }
        }
        source.resume()
        return source
    }
}
