// swift-tools-version:6.0
import PackageDescription

// The bench's baseline: a bare SwiftNIO WebSocket fan-out server, the transport's own cost with nothing of the
// broker on top (docs/BENCHMARKS.md, "Baseline"). A package of its own so that it depends on SwiftNIO alone and
// never on the broker's code. `scripts/bench` builds it with `--scratch-path Benchmarks/BaselineServer/.build`.
let package = Package(
    name: "BaselineServer",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "baseline-server", targets: ["baseline-server"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3")
    ],
    targets: [
        .executableTarget(
            name: "baseline-server",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
