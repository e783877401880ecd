import NIOCore
import NIOEmbedded
@_spi(Benchmarks) import LocationBroker

/// A whole fan-out delivery in process (`DeliveryFixture`): the hub's publish, the hop to the sockets' event loop,
/// each socket writer's drain, and the write and flush through the broker's real pipeline (NIO's WebSocket codec,
/// the frame gate, the aggregator, the connection handler) down to a handler that drops the bytes where the socket
/// would take them. Everything but the system calls and the wake-ups of a real event loop.
enum DeliveryRuns {
    /// One volunteer watched by `subscribers` donors, each on its own `EmbeddedChannel`, all on one loop (the
    /// broker's drains are per event loop); `positions` publishes are measured.
    static func fanOut(subscribers: Int, positions: Int, warmup: Int) throws -> Int {
        let fixture = DeliveryFixture(donors: subscribers)
        let loop = EmbeddedEventLoop()
        let sink = Sink()
        var channels: [EmbeddedChannel] = []
        for index in 0..<subscribers {
            let channel = EmbeddedChannel(loop: loop)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
            try channel.pipeline.syncOperations.addHandler(SinkHandler(sink: sink))
            try fixture.serve(donor: index, on: channel.pipeline.syncOperations)
            try channel.writeInbound(fixture.subscribeFrame(donor: index))
            channels.append(channel)
        }
        loop.run()
        // The welcome and the subscription's answer went out; the first publish also says the volunteer is online.
        fixture.publish()
        loop.run()
        // Then the history fills, as in `fanout`.
        for _ in 0..<warmup { try expectDelivered(fixture, loop, sink, subscribers) }
        let before = (flushes: sink.flushes, writes: sink.writes)
        let queued = callgrindMeasuredDelivery(fixture, loop, positions: positions)
        let flushes = sink.flushes - before.flushes
        let writes = sink.writes - before.writes
        // One position frame per subscriber per publish, each drain one write and one flush.
        guard queued == subscribers * positions, writes == queued, flushes == queued else {
            throw RunError(description: "queued \(queued), wrote \(writes) and flushed \(flushes) frames, expected \(subscribers * positions) of each")
        }
        for channel in channels { _ = try channel.finish(acceptAlreadyClosed: true) }
        return writes
    }

    @inline(never)
    static func callgrindMeasuredDelivery(_ fixture: DeliveryFixture, _ loop: EmbeddedEventLoop, positions: Int) -> Int {
        var queued = 0
        for _ in 0..<positions {
            queued += fixture.publish()
            loop.run()
        }
        return queued
    }

    private static func expectDelivered(_ fixture: DeliveryFixture, _ loop: EmbeddedEventLoop, _ sink: Sink, _ subscribers: Int) throws {
        let before = sink.writes
        fixture.publish()
        loop.run()
        guard sink.writes - before == subscribers else {
            throw RunError(description: "a publish reached \(sink.writes - before) of \(subscribers) subscribers")
        }
    }
}
