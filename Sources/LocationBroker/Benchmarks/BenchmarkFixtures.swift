import BrokerCore
import BrokerProtocol
import Logging
import Synchronization

// This file exists only for the microbenchmarks in Benchmarks/Micro (`scripts/microbench`). It exposes, under
// `@_spi(Benchmarks)`, just enough to drive the broker's internal hot paths from another package; the broker's
// types stay internal, and nothing else should import this SPI.

/// A hub with one volunteer's channel and `subscribers` donors watching it, for the publish -> fan-out
/// microbenchmark. Exists only for Benchmarks/Micro; not part of the broker's API.
///
/// Built the way the broker builds it: one donation per donor, all `BEING-LOOKED-FOR` with the same volunteer,
/// each donor connected and subscribed to the volunteer's channel. The publish limit and the maximum age of a fix are
/// raised so that neither refuses a benchmark's publish, the position is stamped when the fixture is made (after the
/// donations' trackable windows opened, so it is kept for them), and it stays far from every destination, so no
/// arrival fires.
/// Each donor's sink is the broker's own ``Outbox`` with no socket writer attached: the fixture takes the queued
/// frames itself, as ``SocketWriter`` does on the socket's event loop, so the event-loop hop and the socket write are not measured.
@_spi(Benchmarks)
public final class PublishFixture: Sendable {
    /// The channel every subscriber watches.
    public let volunteer = "volunteer@example.org"
    /// How many donors watch the channel.
    public let subscriberCount: Int

    private let hub: Hub
    private let outboxes: [Outbox]
    private let position: Position
    private let drainBuffer = Mutex(DrainBuffer())

    /// Builds the hub, the donations, the connections and the subscriptions, publishes once (which also reports
    /// the volunteer online) and drains every outbox, so the outboxes are empty when measuring starts.
    /// - Throws: ``FixtureError`` if a donor could not subscribe or a publish does not reach every subscriber.
    public init(subscribers: Int) throws {
        var settings = HubSettings(BrokerConfiguration())
        settings.publishRate = 1_000_000_000
        settings.publishBurst = 1_000_000_000
        // A fixed timestamp would be older than the maximum age, and earlier than the windows opened below.
        settings.maxPositionAgeMilliseconds = .max / 4
        let hub = Hub(settings: settings, metrics: BrokerMetrics(), framing: TextFrame.framing)
        let logger = Logger(label: "benchmark")
        let home = Home(lat: -34.6037, lon: -58.3816, label: "Av. Corrientes 1234")
        let institution = Institution(lat: -34.5875, lon: -58.4206, name: "Caritas Palermo")
        var outboxes: [Outbox] = []
        for index in 0..<subscribers {
            let donor = "donor-\(index)@example.org"
            let id = "d-\(index)"
            hub.apply(
                DonationChange(
                    id: id, revision: Int64(index + 1), old: nil,
                    new: Donation(
                        id: id, donor: donor, volunteer: volunteer, state: .beingLookedFor, home: home,
                        institution: institution, createdAt: 0, updatedAt: 0)))
            let outbox = Outbox(limit: settings.outboxBytes, stallLimit: settings.slowConsumerStall)
            let connection = hub.connect(VerifiedIdentity(identity: donor, expiresAt: .max / 2000), sink: outbox, logger: logger)
            if let refusal = hub.subscribe(connection, ClientFrame.Subscribe(target: .donation(id))) {
                throw FixtureError(description: "donor \(index) could not subscribe: \(refusal.message)")
            }
            outboxes.append(outbox)
        }
        self.hub = hub
        self.outboxes = outboxes
        self.position = Position(lat: -34.6200, lon: -58.4400, accuracy: 5, speed: 8.5, heading: 270, timestamp: WallClock.system.now())
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
@_spi(Benchmarks)
public struct TokenFixture: Sendable {
    /// The token verified by ``verifyOnce()``: `sub` is a volunteer's e-mail, valid for a day from when it was made.
    public let token: String
    private let verifier: TokenVerifier

    /// Mints a token with a fixed secret and makes the verifier the broker would make for that secret.
    public init() async throws {
        let secret = "microbenchmark-secret-0123456789abcdef"
        var configuration = BrokerConfiguration()
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
@_spi(Benchmarks)
public struct FixtureError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
}
