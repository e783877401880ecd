import NIOCore
import NIOEmbedded
import BrokerBenchmarkFixtures

/// A whole fan-out delivery in process (`DeliveryFixture`): the hub's publish, the hop to the sockets' event loop,
/// each socket writer's drain, and the write and flush through the broker's real pipeline (NIO's WebSocket codec,
/// the connection handler) down to a handler that drops the bytes where the socket would take them. Everything but the system calls and the wake-ups of a real event loop.
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

    /// One volunteer watched by one donor, each on its own `EmbeddedChannel` on one loop: the volunteer's publish
    /// frame read through the broker's pipeline (NIO's decoder, the connection handler, the publish fast path), the
    /// hub's publish, and the donor's drain and write. `rounds` publishes are measured.
    static func pairs(rounds: Int, warmup: Int) throws -> Int {
        let fixture = DeliveryFixture(donors: 1)
        let loop = EmbeddedEventLoop()
        let volunteerSink = Sink(), donorSink = Sink()
        let volunteer = EmbeddedChannel(loop: loop)
        let donor = EmbeddedChannel(loop: loop)
        for channel in [volunteer, donor] { try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait() }
        try volunteer.pipeline.syncOperations.addHandler(SinkHandler(sink: volunteerSink))
        try fixture.serveVolunteer(on: volunteer.pipeline.syncOperations)
        try donor.pipeline.syncOperations.addHandler(SinkHandler(sink: donorSink))
        try fixture.serve(donor: 0, on: donor.pipeline.syncOperations)
        try donor.writeInbound(fixture.subscribeFrame(donor: 0))
        let frame = fixture.publishFrame()
        loop.run()
        // The first publish also says the volunteer is online; then the history fills.
        try volunteer.writeInbound(frame)
        loop.run()
        for _ in 0..<warmup {
            let before = donorSink.writes
            try volunteer.writeInbound(frame)
            loop.run()
            guard donorSink.writes - before == 1 else { throw RunError(description: "a publish reached the donor \(donorSink.writes - before) times") }
        }
        let before = (donor: donorSink.writes, volunteer: volunteerSink.writes)
        try callgrindMeasuredPairs(volunteer, frame, loop, rounds: rounds)
        let delivered = donorSink.writes - before.donor
        // A publish without an id is answered only when refused: the volunteer must have been sent nothing.
        guard delivered == rounds, volunteerSink.writes == before.volunteer else {
            throw RunError(description: "the donor got \(delivered) of \(rounds) frames; the volunteer was sent \(volunteerSink.writes - before.volunteer)")
        }
        for channel in [volunteer, donor] { _ = try channel.finish(acceptAlreadyClosed: true) }
        return delivered
    }

    @inline(never)
    static func callgrindMeasuredPairs(_ volunteer: EmbeddedChannel, _ frame: ByteBuffer, _ loop: EmbeddedEventLoop, rounds: Int) throws {
        for _ in 0..<rounds {
            try volunteer.writeInbound(frame)
            loop.run()
        }
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
