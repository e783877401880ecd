import BrokerProtocol
import BrokerBenchmarkFixtures

/// The broker's own code on the hot path, through the microbenchmarks' fixtures (`PublishFixture`): the hub's
/// publish (rate limit, gate, encode once, keep in the history, queue the same bytes in every subscriber's outbox),
/// then each outbox taken as its socket writer takes it. Neither the event-loop hop nor the socket write is in it.
enum BrokerRuns {
    /// One volunteer watched by `subscribers` donors; `positions` publishes are measured.
    static func fanOut(subscribers: Int, positions: Int, warmup: Int) throws -> Int {
        let fixture = try PublishFixture(subscribers: subscribers)
        // Fills the history, so the measured publishes each drop the oldest entry as a long-running channel does.
        for _ in 0..<warmup { try expect(fixture.publishOnce(), subscribers) }
        let delivered = callgrindMeasuredFanOut(fixture, positions: positions)
        try expect(delivered, subscribers * positions)
        return delivered
    }

    /// `pairs` volunteers, each watched by one donor (a hub each, since the fixture holds one channel); every
    /// volunteer publishes once per round.
    static func pairs(pairs: Int, rounds: Int, warmup: Int) throws -> Int {
        let fixtures = try (0..<pairs).map { _ in try PublishFixture(subscribers: 1) }
        for _ in 0..<warmup {
            for fixture in fixtures { try expect(fixture.publishOnce(), 1) }
        }
        let delivered = callgrindMeasuredPairs(fixtures, rounds: rounds)
        try expect(delivered, pairs * rounds)
        return delivered
    }

    /// Decodes a volunteer's publish frame `frames` times, as the connection handler does with each one it reads:
    /// from its raw bytes, where the handler unmasked them.
    static func decode(frames: Int) throws -> Int {
        let decoder = ClientFrameDecoder()
        let bytes = Array(HotPathFrames.publish.utf8)
        guard case .success(.publish) = bytes.withUnsafeBytes({ decoder.decode($0) }) else {
            throw RunError(description: "the publish frame does not decode as a publish")
        }
        let decoded = bytes.withUnsafeBytes { callgrindMeasuredDecode(decoder, $0, frames: frames) }
        try expect(decoded, frames)
        return decoded
    }

    /// Verifies the microbenchmark's HS256 client token `tokens` times, as the WebSocket upgrade does with each
    /// handshake's token: one delivery is one verified token.
    static func verify(tokens: Int, warmup: Int) throws -> Int {
        let fixture = try FixtureLoader.make { try await TokenFixture() }
        for _ in 0..<warmup {
            guard fixture.verifyNow() == "volunteer@example.org" else { throw RunError(description: "the fixture's token was refused") }
        }
        let verified = callgrindMeasuredVerify(fixture, tokens: tokens)
        try expect(verified, tokens)
        return verified
    }

    @inline(never)
    static func callgrindMeasuredVerify(_ fixture: TokenFixture, tokens: Int) -> Int {
        var verified = 0
        for _ in 0..<tokens where fixture.verifyNow() != nil { verified += 1 }
        return verified
    }

    @inline(never)
    static func callgrindMeasuredFanOut(_ fixture: PublishFixture, positions: Int) -> Int {
        var delivered = 0
        for _ in 0..<positions { delivered += fixture.publishOnce() }
        return delivered
    }

    @inline(never)
    static func callgrindMeasuredPairs(_ fixtures: [PublishFixture], rounds: Int) -> Int {
        var delivered = 0
        for _ in 0..<rounds {
            for fixture in fixtures { delivered += fixture.publishOnce() }
        }
        return delivered
    }

    @inline(never)
    static func callgrindMeasuredDecode(_ decoder: ClientFrameDecoder, _ bytes: UnsafeRawBufferPointer, frames: Int) -> Int {
        var decoded = 0
        for _ in 0..<frames {
            if case .success(.publish) = decoder.decode(bytes) { decoded += 1 }
        }
        return decoded
    }

    private static func expect(_ delivered: Int, _ expected: Int) throws {
        guard delivered == expected else {
            throw RunError(description: "delivered \(delivered) frames, expected \(expected)")
        }
    }
}

/// The frames the runs use, the same as the microbenchmarks'.
enum HotPathFrames {
    /// A volunteer's publish as the phone sends it (all optional fields present, with an `id` to acknowledge).
    static let publish =
        #"{"type":"publish","id":"p-42","position":{"lat":-34.6037,"lon":-58.3816,"accuracy":5.437,"speed":8.5,"heading":270,"timestamp":1795000000000}}"#

    /// The `position` frame every subscriber receives, as the broker encodes it.
    static var position: [UInt8] {
        PositionFrameEncoder.encode(
            channel: "volunteer@example.org", seq: 1_795_000_000_000_042,
            position: Position(lat: -34.6200, lon: -58.4400, accuracy: 5.437, speed: 8.5, heading: 270, timestamp: 1_795_000_000_000))
    }
}
