// swift-tools-version:6.1
import Foundation
import PackageDescription

let package = Package(
    name: "location-broker",
    // The floor an app that adds the `BrokerClient` product needs: iOS 16 and macOS 13, as WSClient. The broker and the
    // tools run on Linux, where these do not apply; `scripts/check-client-platforms` holds every package the client
    // reaches to them.
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .executable(name: "location-broker", targets: ["location-broker"]),
        .library(name: "BrokerProtocol", targets: ["BrokerProtocol"]),
        .library(name: "BrokerClient", targets: ["BrokerClient"]),
        .library(name: "LocationBroker", targets: ["LocationBroker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        // Network.framework under WSClient on Apple platforms; the client's own code uses it there only.
        .package(url: "https://github.com/apple/swift-nio-transport-services.git", from: "1.28.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", exact: "5.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
        // The version jwt-kit 5.8.0 resolves to: sealing the cluster bus (ChaChaPoly, HKDF, HMAC).
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        .package(url: "https://github.com/jpsim/Yams.git", exact: "6.2.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", exact: "0.2.0"),
    ],
    targets: [
        // Wire types, error codes, the donation state machine, geodesy and the seeded generator: Foundation only.
        .target(name: "BrokerProtocol"),
        // WebSocket client used by the simulator, the watcher and the tests.
        .target(
            name: "BrokerClient",
            dependencies: [
                "BrokerProtocol",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(
                    name: "NIOTransportServices", package: "swift-nio-transport-services",
                    condition: .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS])),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // The broker's core with no transport: the hub, channels, donation gates, history, presence and the
        // outbox's policy. Small leaf packages only: no sockets, no WebSocket, no HTTP, no database, no crypto.
        .target(
            name: "BrokerCore",
            dependencies: [
                "BrokerProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The broker itself, as a library: the executable below, the tests and the benchmarks use it.
        .target(
            name: "LocationBroker",
            dependencies: [
                "BrokerProtocol",
                "BrokerCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            // Compiled into the binary (`PackageResources`), so the broker stays one file that needs no folder beside
            // it: the tracking page's files, the JavaScript client its script imports, and docs/openapi.yaml (the last
            // two through symbolic links to clients/javascript/ and docs/).
            resources: [
                .embedInCode("Resources/page/page.html"),
                .embedInCode("Resources/page/page.css"),
                .embedInCode("Resources/page/state.js"),
                .embedInCode("Resources/page/connection.js"),
                .embedInCode("Resources/page/rendering.js"),
                .embedInCode("Resources/page/map.js"),
                .embedInCode("Resources/page/start.js"),
                // The JavaScript client (a symbolic link to clients/javascript/location-broker-client.js).
                .embedInCode("Resources/page/location-broker-client.js"),
                .embedInCode("Resources/openapi.yaml"),
            ]
        ),
        // `location-broker`: the command line around the library.
        .executableTarget(name: "location-broker", dependencies: ["LocationBroker"], path: "Sources/location-broker"),
        // What the test targets share: the one live-broker harness, the broker as a process, the bare WebSocket,
        // the fault proxy, the JWKS and PostgreSQL servers, child processes, and the waits with deadlines. Its
        // helpers use the broker's internal types, so they are internal too: test targets `@testable import` it.
        .target(
            name: "BrokerTestSupport",
            dependencies: [
                "LocationBroker",
                "BrokerClient",
                "BrokerProtocol",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/BrokerTestSupport"
        ),
        .testTarget(name: "ProtocolTests", dependencies: ["BrokerProtocol"]),
        // The client library's rules without sockets: the reconnect state machine, the watcher's and the publisher's logic.
        .testTarget(name: "ClientTests", dependencies: ["BrokerClient", "BrokerProtocol"]),
        // The core's rules with fake sinks and a hand-moved clock: no socket is opened.
        .testTarget(name: "CoreTests", dependencies: ["BrokerCore", "BrokerProtocol"]),
        .testTarget(
            name: "BrokerTests",
            dependencies: [
                "BrokerTestSupport",
                "LocationBroker",
                "BrokerCore",
                "BrokerClient",
                "BrokerProtocol",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The tools around the broker. `LB_CORE_ONLY=1 swift build` leaves them out, for quicker work on the broker alone.
if ProcessInfo.processInfo.environment["LB_CORE_ONLY"] == nil {
    package.products += [
        .executable(name: "tracker-watch", targets: ["tracker-watch"]),
        .executable(name: "tracker-sim", targets: ["tracker-sim"]),
    ]
    package.targets += [
        // The donor's view in a terminal: a pure renderer (view model -> screen lines) and a thin executable.
        .target(name: "WatchRendering", dependencies: ["BrokerClient", "BrokerProtocol"]),
        .executableTarget(
            name: "tracker-watch",
            dependencies: [
                "WatchRendering",
                "BrokerClient",
                "BrokerProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/tracker-watch"
        ),
        .testTarget(name: "WatchTests", dependencies: ["WatchRendering", "BrokerClient", "BrokerProtocol"]),
        // Simulated fleets and the load benchmark: motion, lifecycle, load clients and reports, then a thin executable.
        .target(
            name: "SimulationKit",
            dependencies: [
                "BrokerProtocol",
                "BrokerClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "tracker-sim",
            dependencies: [
                "SimulationKit",
                "BrokerClient",
                "BrokerProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/tracker-sim"
        ),
        .testTarget(
            name: "SimulatorTests",
            dependencies: [
                "BrokerTestSupport",
                "SimulationKit",
                "BrokerProtocol",
                "LocationBroker",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
    ]
}
