// swift-tools-version:6.1
import PackageDescription

// The driver `scripts/callgrind` runs under `valgrind --tool=callgrind` to count the instructions of the broker's
// hot path per delivery (docs/BENCHMARKS.md, "Where the time goes"). A package of its own, like Benchmarks/Micro,
// so that it never enters the broker's build or `swift test`; `scripts/callgrind` builds it with
// `--scratch-path Benchmarks/HotPath/.build`. Its main is synchronous: valgrind 3.19 dies on Swift's async main.
let package = Package(
    name: "HotPath",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "location-broker", path: "../.."),
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3"),
    ],
    targets: [
        .executableTarget(
            name: "hot-path",
            dependencies: [
                .product(name: "BrokerProtocol", package: "location-broker"),
                .product(name: "BrokerBenchmarkFixtures", package: "location-broker"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
