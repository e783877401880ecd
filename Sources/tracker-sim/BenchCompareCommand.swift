import ArgumentParser
import FleetSimulation
import Foundation
import LoadDriver

/// `tracker-sim bench-compare`: sets each broker report of a bench run against the baseline's report of the same
/// scenario, adds the ratios to the broker's report, and writes the table of docs/BENCHMARKS.md's "Baseline"
/// section. `scripts/bench` runs it after the scenarios.
struct BenchCompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-compare",
        abstract: "Set the broker's bench reports against the baseline's, measured in the same run.",
        discussion: """
            Reads DIR/SCENARIO.json (the broker) and DIR/SCENARIO-baseline.json (the baseline) for each scenario, \
            adds a `baseline` object (both sides' figures and broker ÷ baseline ratios) to the broker's report, and \
            writes DIR/comparison.json and DIR/comparison.md. With --docs, the table also replaces what lies \
            between the markers \(BenchCompareCommand.begin) and \(BenchCompareCommand.end) in that file.
            """
    )

    static let begin = "<!-- scripts/bench: baseline table begins -->"
    static let end = "<!-- scripts/bench: baseline table ends -->"

    @Option(help: "The folder of the run's reports (scripts/bench's OUT).")
    var dir: String

    @Option(help: "A Markdown file whose baseline table to replace (docs/BENCHMARKS.md).")
    var docs: String?

    @Option(help: "The command that made the run, for the docs.")
    var command = "scripts/bench"

    @Argument(help: "The scenarios run.")
    var scenarios: [String]

    /// What comparison.json holds.
    struct Run: Codable {
        var date: String
        var command: String
        var machine: BenchReport.Machine?
        var comparisons: [BenchComparison]
    }

    func run() throws {
        let folder = URL(fileURLWithPath: dir)
        var comparisons: [BenchComparison] = []
        var machine: BenchReport.Machine?
        for scenario in scenarios {
            let brokerURL = folder.appendingPathComponent("\(scenario).json")
            let baselineURL = folder.appendingPathComponent("\(scenario)-baseline.json")
            guard var broker = try? Self.read(brokerURL), let baseline = try? Self.read(baselineURL) else {
                FileHandle.standardError.write(Data("bench-compare: no pair of reports for \(scenario) in \(dir); left out\n".utf8))
                continue
            }
            let comparison: BenchComparison
            do {
                comparison = try BenchComparison(broker: broker, baseline: baseline)
            } catch {
                throw ValidationError("\(scenario): \(error)")
            }
            broker.baseline = comparison
            try broker.json().write(to: brokerURL)
            machine = machine ?? broker.machine
            comparisons.append(comparison)
            print("\(scenario): \(comparison.summary)")
        }
        guard !comparisons.isEmpty else { throw ValidationError("no scenario had both a broker and a baseline report in \(dir)") }

        let date = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
        let run = Run(date: date, command: command, machine: machine, comparisons: comparisons)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(run).write(to: folder.appendingPathComponent("comparison.json"))
        let section = Self.section(run)
        try Data((section + "\n").utf8).write(to: folder.appendingPathComponent("comparison.md"))
        print(section)

        if let docs {
            let text = try String(contentsOfFile: docs, encoding: .utf8)
            guard let updated = BenchComparison.replacingSection(of: text, begin: Self.begin, end: Self.end, with: section) else {
                throw ValidationError("\(docs) has no \(Self.begin) ... \(Self.end) markers")
            }
            try Data(updated.utf8).write(to: URL(fileURLWithPath: docs))
            print("  docs         \(docs) updated")
        }
    }

    /// The Markdown that goes between the markers: when, where, how, and the table.
    static func section(_ run: Run) -> String {
        let machine = run.machine.map { "\($0.cores) cores, \($0.memoryGiB) GiB, Linux \($0.kernel)" } ?? "unknown machine"
        return """
            Measured \(run.date) on \(machine) by `\(run.command)`: each scenario against a fresh broker, then \
            against a fresh baseline, with the same driver and sizes. × is broker ÷ baseline.

            \(BenchComparison.table(run.comparisons))
            """
    }

    static func read(_ url: URL) throws -> BenchReport {
        try JSONDecoder().decode(BenchReport.self, from: Data(contentsOf: url))
    }
}
