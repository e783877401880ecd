// swift-tools-version:6.1
import PackageDescription

// Microbenchmarks of the broker's hot paths with ordo-one/benchmark (docs/BENCHMARKS.md, "Microbenchmarks"). A
// package of its own so that the benchmark library never enters the broker's build or `swift test`.
// `scripts/microbench` builds it with `--scratch-path Benchmarks/Micro/.build` and checks the committed
// thresholds in Thresholds/.
let package = Package(
    name: "Micro",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "location-broker", path: "../.."),
        .package(url: "https://github.com/ordo-one/benchmark.git", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "BrokerBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "BrokerProtocol", package: "location-broker"),
                .product(name: "BrokerBenchmarkFixtures", package: "location-broker"),
            ],
            path: "Benchmarks/BrokerBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
