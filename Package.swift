// swift-tools-version:6.1
import Foundation
import PackageDescription

let package = Package(
    name: "location-broker",
    // The floor an app that adds the `BrokerClient` product needs: iOS 16 and macOS 13, as WSClient. The broker and the
    // tools run on Linux, and build on a Mac at the same floor; `scripts/check-client-platforms` holds every package
    // the client reaches to it, and with `--all-targets` every target's sources and packages.
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .executable(name: "location-broker", targets: ["location-broker"]),
        .library(name: "BrokerProtocol", targets: ["BrokerProtocol"]),
        .library(name: "BrokerClient", targets: ["BrokerClient"]),
        .library(name: "TrackingRules", targets: ["TrackingRules"]),
        .library(name: "LocationBroker", targets: ["LocationBroker"]),
        // For Benchmarks/HotPath and Benchmarks/Micro only.
        .library(name: "BrokerBenchmarkFixtures", targets: ["BrokerBenchmarkFixtures"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        // Network.framework under WSClient on Apple platforms; the client's own code uses it there only.
        .package(url: "https://github.com/apple/swift-nio-transport-services.git", from: "1.28.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // ManagedAtomic: counters and identifiers on every platform the package declares (Synchronization's Atomic
        // needs macOS 15 and iOS 18).
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // Sealing the cluster bus (ChaChaPoly, HKDF, HMAC); jwt-kit 5.8 asks for 4.1 or later.
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.1.0"),
        // Both majors: the broker reads its configuration with `Yams.compose` and the simulator with `YAMLDecoder`,
        // which 5 and 6 share, so an app that uses Yams 5 can still add `BrokerClient`.
        .package(url: "https://github.com/jpsim/Yams.git", "5.0.1"..<"7.0.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
    ],
    targets: [
        // The wire contract: wire types, error codes, the donation state machine and geodesy. Foundation only.
        .target(name: "BrokerProtocol"),
        // The rules every donor's view of a trip follows (staleness, trail, backoff, the speed smoothing and the ETA),
        // written once for the client, the watcher and the broker's tracking page. Foundation only, as the client.
        .target(name: "TrackingRules", dependencies: ["BrokerProtocol"]),
        // The seeded generator: the simulator's replayable runs and the tests' random inputs. Foundation only.
        .target(name: "DeterministicRandom"),
        // WebSocket client used by the simulator, the watcher and the tests.
        .target(
            name: "BrokerClient",
            dependencies: [
                "BrokerProtocol",
                "TrackingRules",
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
        // The broker's core with no transport: the hub, channels, donation gates, history, presence, trip events and
        // the outbox's policy. Small leaf packages only: no sockets, no WebSocket, no HTTP, no database, no crypto.
        .target(
            name: "BrokerCore",
            dependencies: [
                "BrokerProtocol",
                "TrackingRules",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // Authentication: the JOSE reader, client tokens (HS256 with a secret; RS256 and ES256 from a JWKS) and the
        // broker's watch links. No sockets, no HTTP server.
        .target(
            name: "BrokerAuth",
            dependencies: [
                "BrokerProtocol",
                "BrokerCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The WebSocket transport on SwiftNIO: the one upgrade path, each connection's handler and state machine,
        // frame reading, the bounded outbox and socket writer. It knows the core and NIO; who may connect and what
        // is counted are given to it (`UpgradeDecision`, `WebSocketMetrics`).
        .target(
            name: "BrokerWebSocket",
            dependencies: [
                "BrokerProtocol",
                "BrokerCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // What leaves the broker for a receiver: Standard Webhooks signatures, VAPID (RFC 8292), Web Push encryption
        // (RFC 8291), the retry schedule and the HTTP poster. Crypto and HTTP only: it knows nothing of the broker.
        .target(
            name: "EventDelivery",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // What every HTTP route of the broker shares: the request context and the JSON answers and errors.
        .target(
            name: "BrokerHTTP",
            dependencies: [
                "BrokerProtocol",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The donor's tracking page (its files, compiled in), its map settings, the Leaflet files and map tiles.
        .target(
            name: "TrackingPage",
            dependencies: [
                "BrokerProtocol",
                "BrokerCore",
                "BrokerHTTP",
                "TrackingRules",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Compiled into the binary (`PackageResources`), so the broker stays one file that needs no folder beside it.
            resources: [
                .embedInCode("Resources/page/page.html"),
                .embedInCode("Resources/page/page.css"),
                .embedInCode("Resources/page/state.js"),
                .embedInCode("Resources/page/connection.js"),
                .embedInCode("Resources/page/rendering.js"),
                .embedInCode("Resources/page/map.js"),
                .embedInCode("Resources/page/push.js"),
                .embedInCode("Resources/page/push-worker.js"),
                .embedInCode("Resources/page/start.js"),
                // The JavaScript client the page's script imports (a symbolic link to clients/javascript/).
                .embedInCode("Resources/page/location-broker-client.js"),
            ]
        ),
        // PubNub's publish, subscribe (long poll), time and presence endpoints over the hub, for PubNub's own SDKs.
        .target(
            name: "PubNubCompatibility",
            dependencies: [
                "BrokerProtocol",
                "BrokerCore",
                "BrokerAuth",
                "BrokerHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // OwnTracks' HTTP mode over the hub: `POST /v1/owntracks` with Basic auth, a `location` message as a publish.
        .target(
            name: "OwnTracksCompatibility",
            dependencies: [
                "BrokerProtocol",
                "BrokerCore",
                "BrokerAuth",
                "BrokerHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The broker's listening socket on SwiftNIO: one port for HTTP/1.1 and WebSocket upgrades, each connection's
        // pipeline, request deadlines, the HTTP responder's common headers, TLS files and quiescing at shutdown.
        .target(
            name: "BrokerServer",
            dependencies: [
                "BrokerProtocol",
                "BrokerCore",
                "BrokerWebSocket",
                "BrokerHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Log records as one JSON object a line on standard error (`log_format: json`). Imports none of ours.
        .target(name: "JSONLogging", dependencies: [.product(name: "Logging", package: "swift-log")]),
        // What the stores share and the rest of the broker calls: the `DonationStore` and `EventOutbox` protocols, the
        // outbox's rows, the schema's release record and private files. No database package.
        .target(name: "BrokerStorage", dependencies: ["BrokerProtocol", "BrokerCore"]),
        // One node's store: donations and the event outbox in one SQLite file (GRDB), its migrations and its backup.
        .target(
            name: "BrokerSQLite",
            dependencies: [
                "BrokerStorage",
                "BrokerProtocol",
                "BrokerCore",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // A cluster node's store and bus on PostgreSQL: donations, the event outbox, their migrations, and the cluster
        // bus (sealed LISTEN/NOTIFY shards, the last positions, catch-up) that links this node's hub to the others'.
        .target(
            name: "BrokerPostgres",
            dependencies: [
                "BrokerStorage",
                "BrokerProtocol",
                "BrokerCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The broker: configuration, the HTTP API and listener, the event dispatcher, metrics and `Broker.build`, which
        // puts the targets above together (the store it opens is BrokerSQLite's or BrokerPostgres'). The executable,
        // the tests and the benchmark fixtures use it.
        .target(
            name: "LocationBroker",
            dependencies: [
                "BrokerProtocol",
                "BrokerCore",
                "BrokerAuth",
                "BrokerWebSocket",
                "BrokerHTTP",
                "TrackingPage",
                "PubNubCompatibility",
                "OwnTracksCompatibility",
                "BrokerServer",
                "JSONLogging",
                "EventDelivery",
                "BrokerStorage",
                "BrokerSQLite",
                "BrokerPostgres",
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
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Atomics", package: "swift-atomics"),
            ],
            // docs/openapi.yaml, compiled in through the symbolic link Resources/openapi.yaml.
            resources: [.embedInCode("Resources/openapi.yaml")]
        ),
        // The fixtures Benchmarks/HotPath and Benchmarks/Micro measure: the broker's real handlers set up in process.
        // Not part of the broker: only the benchmark packages use this product.
        .target(
            name: "BrokerBenchmarkFixtures",
            dependencies: [
                "LocationBroker",
                "BrokerServer",
                "BrokerAuth",
                "BrokerWebSocket",
                "BrokerCore",
                "BrokerProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Benchmarks/Fixtures"
        ),
        // `location-broker`: the command line around the library.
        .executableTarget(name: "location-broker", dependencies: ["LocationBroker"], path: "Sources/location-broker"),
        // What the test targets share: the one live-broker harness, the broker as a process, the bare WebSocket,
        // the broker's WebSocket handlers on an `EmbeddedChannel` with a hand-moved clock, the fault proxy, the JWKS
        // and PostgreSQL servers, child processes, the waits with deadlines, and the tracking page's fixtures (node
        // and eslint, the shared numbers it declares, small MBTiles files). Its
        // helpers use the broker's internal types, so they are internal too: test targets `@testable import` it.
        .target(
            name: "BrokerTestSupport",
            dependencies: [
                "LocationBroker",
                "BrokerStorage",
                "BrokerAuth",
                "BrokerCore",
                "BrokerWebSocket",
                "BrokerHTTP",
                "TrackingPage",
                "TrackingRules",
                "BrokerClient",
                "BrokerProtocol",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/BrokerTestSupport"
        ),
        .testTarget(name: "ProtocolTests", dependencies: ["BrokerProtocol", "DeterministicRandom"]),
        // The speed smoothing and the ETA, by the shared numbers.
        .testTarget(name: "TrackingRulesTests", dependencies: ["TrackingRules", "BrokerProtocol"]),
        // The client library's rules without sockets: the reconnect state machine, the watcher's and the publisher's logic.
        .testTarget(name: "ClientTests", dependencies: ["BrokerClient", "BrokerProtocol", "TrackingRules", "DeterministicRandom", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]),
        // What an app sees: BrokerClient alone (its re-exports), and the SwiftUI example of CLIENTS.md compiled against it.
        .testTarget(name: "ClientImportTests", dependencies: ["BrokerClient"]),
        // Signatures, VAPID, Web Push encryption by the RFCs' vectors, the retry schedule, and the poster against a
        // live server on port 0.
        .testTarget(
            name: "EventDeliveryTests",
            dependencies: [
                "EventDelivery",
                "DeterministicRandom",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The core's rules with fake sinks and a hand-moved clock: no socket is opened. Its waits (the lock, the latch)
        // end at the test support's deadlines.
        .testTarget(
            name: "CoreTests",
            dependencies: ["BrokerCore", "BrokerProtocol", "BrokerTestSupport", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]),
        // The SQLite store and outbox on real files: the outbox's shared scenarios, one transaction per change and its
        // events, the migrations, and the file's mode. No broker is started.
        .testTarget(
            name: "BrokerSQLiteTests",
            dependencies: [
                "BrokerSQLite",
                "BrokerStorage",
                "BrokerProtocol",
                "BrokerTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The PostgreSQL store, outbox and schema on the real PostgreSQL the test support starts, and the cluster bus's
        // seals, shards and echoes without a broker (Tests/BrokerTests runs the bus across broker processes).
        .testTarget(
            name: "BrokerPostgresTests",
            dependencies: [
                "BrokerPostgres",
                "BrokerStorage",
                "BrokerCore",
                "BrokerProtocol",
                "BrokerWebSocket",
                "BrokerTestSupport",
                "DeterministicRandom",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The WebSocket transport without a broker: the upgrade's head and handler, frame reading and assembly,
        // unmasking and UTF-8 checks, the connection's state machine, timers, close handshakes and logs, the outbox's
        // pings, and the handlers on `EmbeddedChannel`s with virtual time (where a position is written: the
        // benchmarks' delivery fixture).
        .testTarget(
            name: "BrokerWebSocketTests",
            dependencies: [
                "BrokerWebSocket",
                "BrokerCore",
                "BrokerProtocol",
                "BrokerTestSupport",
                "BrokerBenchmarkFixtures",
                "JSONLogging",
                "DeterministicRandom",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The JSON log records' fields, one object a line.
        .testTarget(
            name: "JSONLoggingTests",
            dependencies: [
                "JSONLogging",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The bearer credential read on bytes, held to Foundation's trimming.
        .testTarget(name: "BrokerHTTPTests", dependencies: ["BrokerHTTP", .product(name: "HTTPTypes", package: "swift-http-types")]),
        // The listening socket on port 0 (a WebSocket served with no task, the HTTP answers' headers, graceful
        // shutdown) and the `Date` header's text. Upgrades are let in by a token check of the tests' own: no broker.
        .testTarget(
            name: "BrokerServerTests",
            dependencies: [
                "BrokerServer",
                "BrokerWebSocket",
                "BrokerHTTP",
                "BrokerAuth",
                "BrokerCore",
                "BrokerProtocol",
                "BrokerClient",
                "BrokerTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The composition root's own parts without a broker: the settings' layers and refusals, the files and docs
        // made from the settings table, the configuration report, the WebSocket endpoint and its decision in the
        // server's channel, the metrics' frame counters, and the push fan-out's retries on a real SQLite outbox.
        .testTarget(
            name: "LocationBrokerTests",
            dependencies: [
                "LocationBroker",
                "BrokerTestSupport",
                "BrokerAuth",
                "BrokerCore",
                "BrokerPostgres",
                "BrokerProtocol",
                "BrokerServer",
                "BrokerSQLite",
                "BrokerStorage",
                "BrokerWebSocket",
                "EventDelivery",
                "TrackingPage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The JOSE reader against JWTKit as an oracle, the base64url codec against Foundation's, and how long a JWKS is
        // kept.
        .testTarget(
            name: "BrokerAuthTests",
            dependencies: [
                "BrokerAuth",
                "BrokerCore",
                "BrokerProtocol",
                .product(name: "JWTKit", package: "jwt-kit"),
            ]
        ),
        // PubNub's answers, cursors and positions as its SDKs read them, and the held polls' slots, without a broker.
        .testTarget(
            name: "PubNubCompatibilityTests",
            dependencies: [
                "PubNubCompatibility",
                "BrokerProtocol",
                "BrokerTestSupport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The tracking page without a broker: its script and the JavaScript client through node and eslint, the shared
        // numbers it keeps no copies of, its reconnection by the client library's rules, the tile server's template and
        // the MBTiles reader.
        .testTarget(
            name: "TrackingPageTests",
            dependencies: ["TrackingPage", "TrackingRules", "BrokerProtocol", "BrokerClient", "BrokerTestSupport"]
        ),
        // The test support's own promises that need no broker: waits end at their deadlines, naming what they waited for.
        .testTarget(name: "BrokerTestSupportTests", dependencies: ["BrokerTestSupport", "BrokerCore"]),
        // End to end: a broker started in process (`startBroker`) or as a process, with real clients, files, signals,
        // and nodes on the PostgreSQL the tests start.
        .testTarget(
            name: "BrokerTests",
            dependencies: [
                "BrokerTestSupport",
                "BrokerStorage",
                "BrokerSQLite",
                "BrokerPostgres",
                "JSONLogging",
                "LocationBroker",
                "BrokerAuth",
                "BrokerWebSocket",
                "BrokerHTTP",
                "TrackingPage",
                "BrokerCore",
                "BrokerClient",
                "WatchRendering",
                "BrokerProtocol",
                "TrackingRules",
                "DeterministicRandom",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
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
        .target(name: "WatchRendering", dependencies: ["BrokerClient", "BrokerProtocol", "TrackingRules"]),
        .executableTarget(
            name: "tracker-watch",
            dependencies: [
                "WatchRendering",
                "BrokerClient",
                "BrokerProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Sources/tracker-watch"
        ),
        .testTarget(
            name: "WatchTests", dependencies: ["WatchRendering", "BrokerClient", "BrokerProtocol", "TrackingRules", "DeterministicRandom"]),
        // Simulated fleets: motion, the donation lifecycle, volunteers and donors against a broker, Ponte's backend calls
        // and the run's statistics.
        .target(
            name: "FleetSimulation",
            dependencies: [
                "BrokerProtocol",
                "BrokerClient",
                "DeterministicRandom",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The load benchmark: raw load clients in worker processes, the coordinator, reports and comparisons. Its
        // publishers move by the fleet's motion model and its donations are made through the fleet's backend client.
        .target(
            name: "LoadDriver",
            dependencies: [
                "FleetSimulation",
                "BrokerProtocol",
                "DeterministicRandom",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "tracker-sim",
            dependencies: [
                "FleetSimulation",
                "LoadDriver",
                "BrokerClient",
                "BrokerProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Sources/tracker-sim"
        ),
        .testTarget(
            name: "FleetSimulationTests",
            dependencies: [
                "BrokerTestSupport",
                "FleetSimulation",
                "BrokerProtocol",
                "DeterministicRandom",
                "LocationBroker",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "LoadDriverTests",
            dependencies: [
                "BrokerTestSupport",
                "LoadDriver",
                "FleetSimulation",
                "BrokerProtocol",
                "LocationBroker",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
    ]
}
