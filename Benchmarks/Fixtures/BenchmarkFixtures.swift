import BrokerAuth
import BrokerCore
import BrokerProtocol
import BrokerWebSocket
import LocationBroker
import Logging

// This file exists only for the microbenchmarks in Benchmarks/Micro (`scripts/microbench`). It exposes just enough
// to drive the broker's hot paths from another package; the broker's types stay internal to the package.

/// A hub with one volunteer's channel and `subscribers` donors watching it, for the publish -> fan-out
/// microbenchmark. Exists only for Benchmarks/Micro; not part of the broker's API.
///
/// Built the way the broker builds it (``BenchmarkScene``), each donor connected and subscribed to its donation.
/// Each donor's sink is the broker's own ``Outbox`` with no socket writer attached: the fixture takes the queued
/// frames itself, as ``SocketWriter`` does on the socket's event loop, so the event-loop hop and the socket write are not measured.

public final class PublishFixture: Sendable {
    /// The channel every subscriber watches.
    public let volunteer = BenchmarkScene.volunteer
    /// How many donors watch the channel.
    public let subscriberCount: Int

    private let hub: Hub
    private let outboxes: [Outbox]
    private let position: Position
    private let drainBuffer = LockedValue(DrainBuffer())

    /// Builds the hub, the donations, the connections and the subscriptions, publishes once (which also reports
    /// the volunteer online) and drains every outbox, so the outboxes are empty when measuring starts.
    /// - Throws: ``FixtureError`` if a donor could not subscribe or a publish does not reach every subscriber.
    public init(subscribers: Int) throws {
        let scene = BenchmarkScene(donors: subscribers)
        let logger = Logger(label: "benchmark")
        var outboxes: [Outbox] = []
        for index in 0..<subscribers {
            let outbox = Outbox(limit: scene.hub.settings.outboxBytes, stallLimit: scene.hub.settings.slowConsumerStall)
            let connection = scene.hub.connect(VerifiedIdentity(identity: BenchmarkScene.donor(index), expiresAt: .max / 2000), sink: outbox, logger: logger)
            if let refusal = scene.hub.subscribe(connection, ClientFrame.Subscribe(target: .donation(BenchmarkScene.donation(index)))) {
                throw FixtureError(description: "donor \(index) could not subscribe: \(refusal.message)")
            }
            outboxes.append(outbox)
        }
        self.hub = scene.hub
        self.outboxes = outboxes
        self.position = scene.position
        self.subscriberCount = subscribers
        _ = publishOnce()
        let delivered = publishOnce()
        guard delivered == subscribers else {
            throw FixtureError(description: "one publish reached \(delivered) of \(subscribers) subscribers")
        }
    }

    /// Publishes one position on the volunteer's channel, then takes every frame it queued from each
    /// subscriber's outbox, as each connection's socket writer would.
    /// - Returns: the frames taken (one per subscriber when all went well).
    @discardableResult
    public func publishOnce() -> Int {
        _ = hub.publish(as: volunteer, position: position)
        return drain()
    }

    private func drain() -> Int {
        // One buffer for every drain, kept between publishes, as an event loop's drains share theirs (LoopDrains).
        drainBuffer.withLock { buffer in
            var count = 0
            for outbox in outboxes {
                _ = outbox.takeForSocket(into: &buffer)
                count += buffer.frames.count
                buffer.removeAll()
            }
            return count
        }
    }
}

/// An HS256 verifier configured as the broker configures it, and a token it accepts, for the JWT microbenchmark.
/// Exists only for Benchmarks/Micro; not part of the broker's API.

public struct TokenFixture: Sendable {
    /// The token verified by ``verifyOnce()``: `sub` is a volunteer's e-mail, valid for a day from when it was made.
    public let token: String
    /// The verifier, as the broker makes it for the secret (``AcceptFixture`` checks handshakes with it).
    let verifier: TokenVerifier

    /// Mints a token with a fixed secret and makes the verifier the broker would make for that secret.
    public init() async throws {
        let secret = "microbenchmark-secret-0123456789abcdef"
        var configuration = BrokerConfiguration.defaults
        configuration.jwtSecret = secret
        verifier = try await TokenVerifier(configuration: configuration)
        token = try await TokenVerifier.mintHS256(secret: secret, identity: "volunteer@example.org", ttlSeconds: 86_400)
    }

    /// Verifies ``token`` as the broker does at the WebSocket handshake.
    /// - Returns: the verified identity, or `nil` if the token was refused.
    public func verifyOnce() async -> String? { verifyNow() }

    /// ``verifyOnce()`` without `async`, for a synchronous driver (Benchmarks/HotPath runs under valgrind, which
    /// dies on Swift's async main).
    public func verifyNow() -> String? {
        switch verifier.verify(token) {
        case .success(let verified): verified.identity
        case .failure: nil
        }
    }
}

/// Why a benchmark fixture could not be built. Exists only for Benchmarks/Micro.

public struct FixtureError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
}
