import Benchmark

/// The broker's microbenchmarks, as ordo-one/benchmark's plugin expects them: one closure that registers them all.
/// Run them with `scripts/microbench` (docs/BENCHMARKS.md, "Microbenchmarks").
let benchmarks: @Sendable () -> Void = {
    registerFrameBenchmarks()
    registerTokenBenchmarks()
    registerHubBenchmarks()
}
