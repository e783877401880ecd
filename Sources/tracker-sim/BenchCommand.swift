import ArgumentParser
import FleetSimulation
import Foundation
import LoadDriver

/// `tracker-sim bench`: one load scenario against a broker on this machine, with a report.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the broker under load: idle connections, pairs, fan-out, a fleet at scale, a connect storm.",
        discussion: """
            Scenarios (docs/BENCHMARKS.md explains each):
              idle     --connections N donors subscribed and held for --duration: memory per connection.
              pairs    --pairs P volunteer/donor pairs publishing --rate positions/s in all: latency, deliveries/s, losses.
              fanout   one channel, --watchers S subscribers, --positions M published at --rate per second.
              fleet    --volunteers V pairs driving street-like routes, a fix every --interval (20s), for --duration.
              connect  a storm of --connections N new connections, --concurrency handshakes at a time per worker.

            Connections are spread over --procs worker processes (copies of this program) and source addresses \
            127.0.0.2, 127.0.0.3, ... (--per-address connections each). The broker must be on this machine. \
            Raise its publish limit (LOCATION_BROKER_PUBLISH_RATE, LOCATION_BROKER_PUBLISH_BURST) for pairs and \
            fanout. With --broker-pid the report adds the broker's CPU time per delivery and memory per connection.

            --target baseline drives Benchmarks/BaselineServer (a bare SwiftNIO fan-out) at --broker with the same \
            connections and load: each connection joins its channel through its URL (/ws/<channel>), publishers \
            send the position frame the broker would deliver, and --broker-pid names the baseline's process. \
            scripts/bench runs both and `tracker-sim bench-compare` sets one against the other.

            Exit status: 0 nothing lost and every connection up; 1 losses or failed connections; 2 the run could not start.
            """
    )

    @OptionGroup var broker: BrokerOptions

    @Option(help: "idle, pairs, fanout, fleet or connect.")
    var scenario: String

    @Option(help: "broker, or baseline: Benchmarks/BaselineServer at the --broker address (no API, tokens or secrets needed).")
    var target = "broker"

    @Option(help: "Connections (idle, connect).")
    var connections = 1_000

    @Option(help: "Volunteer/donor pairs (pairs).")
    var pairs = 100

    @Option(help: "Positions per second in all (pairs), or on the one channel (fanout).")
    var rate = 1_000.0

    @Option(help: "Watchers of the one channel (fanout).")
    var watchers = 1_000

    @Option(help: "Positions published on the one channel (fanout).")
    var positions = 200

    @Option(help: "Volunteer/donor pairs (fleet).")
    var volunteers = 1_000

    @Option(help: "Time between a volunteer's fixes (fleet).")
    var interval = "20s"

    @Option(help: "How long the load lasts (idle: how long connections are held).")
    var duration = "20s"

    @Option(help: "Worker processes (0: one worker inside this process).")
    var procs = 1

    @Option(help: "Connections per source address.")
    var perAddress = 20_000

    @Option(help: "Handshakes in flight at once, per worker.")
    var concurrency = 64

    @Option(help: "The broker's process id, to sample its CPU time and memory from /proc.")
    var brokerPid: Int32?

    @Option(help: "Write the report as JSON to this file.")
    var report: String?

    @Option(help: "The area whose centre and streets the positions use.")
    var area = "config/areas/buenos-aires.yaml"

    @Option(help: "Seed of the random choices.")
    var seed: UInt64 = 42

    func run() async throws {
        guard let scenario = BenchScenario(rawValue: scenario) else {
            throw ValidationError("--scenario must be one of \(BenchScenario.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let server = BenchServer(rawValue: target) else {
            throw ValidationError("--target must be one of \(BenchServer.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        // The baseline has no auth and no API: its secrets are not needed.
        let secrets = server == .broker ? try broker.secrets() : ((try? broker.secrets()) ?? (backendKey: "", jwtSecret: ""))
        let loaded: Area
        do {
            loaded = try Area.load(path: area)
        } catch {
            throw ValidationError("\(error)")
        }
        var configuration = BenchConfiguration(
            scenario: scenario, webSocketURL: try broker.webSocketURL(), apiURL: try broker.apiURL(), backendKey: secrets.backendKey,
            jwtSecret: secrets.jwtSecret, area: loaded)
        configuration.server = server
        configuration.connections = connections
        configuration.pairs = pairs
        configuration.rate = rate
        configuration.watchers = watchers
        configuration.positions = positions
        configuration.volunteers = volunteers
        configuration.interval = try seconds(interval, option: "--interval")
        configuration.duration = try seconds(duration, option: "--duration")
        configuration.procs = procs
        configuration.perAddress = perAddress
        configuration.concurrency = concurrency
        configuration.brokerPID = brokerPid
        configuration.seed = seed
        configuration.executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        configuration.command = Self.commandLine()
        if let problem = configuration.problem { throw ValidationError(problem) }

        let coordinator = BenchCoordinator(configuration: configuration) { line in
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        let result: BenchReport
        do {
            result = try await coordinator.run()
        } catch let error as SimulationError {
            FileHandle.standardError.write(Data("tracker-sim bench: \(error.description)\n".utf8))
            throw ExitCode(2)
        }
        print(result.text)
        if let report {
            try result.json().write(to: URL(fileURLWithPath: report))
            print("  report       \(report)")
        }
        if !result.passed { throw ExitCode(1) }
    }

    /// The command line as typed, with secrets hidden.
    static func commandLine() -> String {
        var words: [String] = ["tracker-sim"]
        var hideNext = false
        for word in CommandLine.arguments.dropFirst() {
            if hideNext {
                words.append("***")
                hideNext = false
            } else if word == "--backend-key" || word == "--jwt-secret" {
                words.append(word)
                hideNext = true
            } else if word.hasPrefix("--backend-key=") || word.hasPrefix("--jwt-secret=") {
                words.append(String(word.prefix { $0 != "=" }) + "=***")
            } else {
                words.append(word)
            }
        }
        return words.joined(separator: " ")
    }
}
