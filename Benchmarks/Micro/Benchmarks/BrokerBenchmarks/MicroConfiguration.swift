import Benchmark

/// What every microbenchmark measures, and the tolerances `thresholds check` applies to the p90 values committed in
/// Benchmarks/Micro/Thresholds.
enum MicroConfiguration {
    /// Counts that repeat from run to run (allocations, and instructions where the kernel offers perf counters), and
    /// wall clock, which does not. ARC counts (`retainCount`, `releaseCount`) are left out: on Linux with Swift 6.3
    /// they need ordo-one's swift-runtime-interposer, which is not available here, and without it the benchmark
    /// process crashed (signal 11) in runs taken here.
    static var metrics: [BenchmarkMetric] {
        [.wallClock, .instructions, .mallocCountTotal]
    }

    /// Allocations (and instructions, where counted) may move by 5 % (2 %) at p90 before a result counts as worse or
    /// better than the committed one; `scripts/microbench` fails on worse and asks for `--update` on better. Wall
    /// clock counts as worse only past five times the committed p90: this machine's 2 cores are shared, and time
    /// moves with whatever else runs.
    static var thresholds: [BenchmarkMetric: BenchmarkThresholds] {
        [
            .wallClock: BenchmarkThresholds(relative: [.p90: 400]),
            .instructions: BenchmarkThresholds(relative: [.p90: 2]),
            .mallocCountTotal: BenchmarkThresholds(relative: [.p90: 5]),
        ]
    }

    /// One operation per iteration, so every figure is per operation; at most `iterations` of them or one second.
    static func configuration(iterations: Int) -> Benchmark.Configuration {
        .init(
            metrics: metrics, timeUnits: .microseconds, warmupIterations: 10, scalingFactor: .one,
            maxDuration: .seconds(1), maxIterations: iterations, thresholds: thresholds)
    }
}

/// A benchmark's input was not what the benchmark expects.
struct BenchmarkSetupError: Error, CustomStringConvertible {
    let description: String
}
