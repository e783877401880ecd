import NIOCore
import NIOEmbedded
import BrokerBenchmarkFixtures

/// A connection's acceptance in process (`AcceptFixture`): a fresh `EmbeddedChannel`, the broker's hand-written
/// upgrade (the head read, the token verified, the 101, the WebSocket handlers installed, the welcome written),
/// then the close (the connection handler's end, the hub's disconnect). Everything but the system calls, the
/// accept and the TCP handshake.
enum AcceptRuns {
    /// `connections` connections accepted one after another, each closed before the next, all on one loop.
    static func accept(connections: Int, warmup: Int) throws -> Int {
        let fixture = try FixtureLoader.make { try await AcceptFixture() }
        let loop = EmbeddedEventLoop()
        let sink = Sink()
        for _ in 0..<warmup { try connectAndClose(fixture, loop, sink) }
        // Each connection is written two frames, the 101 and the welcome, each flushed.
        let before = (writes: sink.writes, flushes: sink.flushes)
        try callgrindMeasuredAccept(fixture, loop, sink, connections: connections)
        let writes = sink.writes - before.writes, flushes = sink.flushes - before.flushes
        guard writes == 2 * connections, flushes == 2 * connections, fixture.openConnections == 0 else {
            throw RunError(
                description: "\(connections) connections wrote \(writes) and flushed \(flushes) times (expected twice each); \(fixture.openConnections) left open")
        }
        return connections
    }

    @inline(never)
    static func callgrindMeasuredAccept(_ fixture: AcceptFixture, _ loop: EmbeddedEventLoop, _ sink: Sink, connections: Int) throws {
        for _ in 0..<connections { try connectAndClose(fixture, loop, sink) }
    }

    /// One connection: accepted, upgraded, welcomed, closed by the client.
    private static func connectAndClose(_ fixture: AcceptFixture, _ loop: EmbeddedEventLoop, _ sink: Sink) throws {
        let channel = EmbeddedChannel(loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        try channel.pipeline.syncOperations.addHandler(SinkHandler(sink: sink))
        fixture.accept(on: channel)
        try channel.writeInbound(fixture.request)
        loop.run()
        guard fixture.openConnections == 1 else { throw RunError(description: "the upgrade did not open a connection") }
        try channel.close().wait()
        loop.run()
    }
}
