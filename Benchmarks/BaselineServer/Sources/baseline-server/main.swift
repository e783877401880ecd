import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

// baseline-server: the bench's baseline, a bare SwiftNIO WebSocket fan-out (docs/BENCHMARKS.md, "Baseline").
//
//   baseline-server [--host 127.0.0.1] [--port 0] [--threads N]
//
// Upgrades `GET /ws/<channel>` (any path: the channel is its last segment) to a WebSocket and forwards each text
// frame to the channel's other connections. Prints `listening on PORT` once bound, so scripts can read the port
// when it is 0. Runs until it is killed.

/// The command line: `--host`, `--port` and `--threads`, each followed by its value.
struct Options {
    var host = "127.0.0.1"
    var port = 0
    /// Event loops; the broker's default is one per core, and so is this.
    var threads = System.coreCount

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let name = rest.popFirst() {
            guard let value = rest.popFirst() else { throw UsageError("\(name) needs a value") }
            switch name {
            case "--host": host = value
            case "--port":
                guard let port = Int(value), (0...65_535).contains(port) else { throw UsageError("--port must be 0 to 65535") }
                self.port = port
            case "--threads":
                guard let threads = Int(value), (1...64).contains(threads) else { throw UsageError("--threads must be 1 to 64") }
                self.threads = threads
            default: throw UsageError("unknown option \(name)")
            }
        }
    }
}

struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The channel of a request path: its last non-empty segment without the query (`/ws/bench-v-1` -> `bench-v-1`).
func room(of uri: String) -> String {
    let path = uri.split(separator: "?", maxSplits: 1).first ?? ""
    return path.split(separator: "/").last.map(String.init) ?? ""
}

let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    print("baseline-server: \(error)\nusage: baseline-server [--host 127.0.0.1] [--port 0] [--threads N]")
    exit(2)
}

let rooms = Rooms()
let group = MultiThreadedEventLoopGroup(numberOfThreads: options.threads)
let upgrader = NIOWebSocketServerUpgrader(
    maxFrameSize: 1 << 16,
    shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
    upgradePipelineHandler: { channel, head in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(FanOutHandler(room: room(of: head.uri), rooms: rooms))
        }
    })
let server = try ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 4_096)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                withServerUpgrade: (upgraders: [upgrader], completionHandler: { context in
                    context.pipeline.removeHandler(name: RefusalHandler.name, promise: nil)
                }))
            try channel.pipeline.syncOperations.addHandler(RefusalHandler(), name: RefusalHandler.name)
        }
    }
    .bind(host: options.host, port: options.port)
    .wait()

print("listening on \(server.localAddress?.port ?? options.port)")
fflush(nil)  // stdout is a pipe to scripts/bench: push the line out now
try server.closeFuture.wait()
