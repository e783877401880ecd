import BrokerProtocol
import Foundation
import Logging
import NIOConcurrencyHelpers
import XCTest

@testable import BrokerCore

/// A wall clock the test moves by hand, in milliseconds since the Unix epoch.
final class ManualClock: Sendable {
    private let value: NIOLockedValueBox<Int64>

    init(start: Int64 = 1_795_000_000_000) { value = NIOLockedValueBox(start) }

    var now: Int64 { value.withLockedValue { $0 } }

    func advance(by milliseconds: Int64) { value.withLockedValue { $0 += milliseconds } }

    /// The clock as the core takes it.
    var wallClock: WallClock { WallClock { self.now } }
}

/// A monotonic instant the test moves by hand, for the outbox's stall rule.
final class ManualInstant: Sendable {
    private let value = NIOLockedValueBox(ContinuousClock.now)

    var now: ContinuousClock.Instant { value.withLockedValue { $0 } }

    func advance(by duration: Duration) { value.withLockedValue { $0 = $0.advanced(by: duration) } }
}

/// A connection's sink with no socket: the core's own ``OutboxQueue`` policy under a lock, with a hand-moved
/// instant, and a way to read what a client would receive.
final class FakeSink: FrameSink {
    private let queue: NIOLockedValueBox<OutboxQueue>
    private let instant: ManualInstant
    private let aborts = NIOLockedValueBox(0)

    init(limit: Int = 262_144, stallLimit: Duration = .seconds(10), instant: ManualInstant = ManualInstant()) {
        queue = NIOLockedValueBox(OutboxQueue(limit: limit, stallLimit: stallLimit))
        self.instant = instant
    }

    func enqueue(_ frame: PreparedFrame, conflationKey: String?) -> EnqueueResult {
        let now = instant.now
        return queue.withLockedValue { $0.enqueue(frame, conflationKey: conflationKey, now: now) }
    }

    func discardQueued(conflationKey: String) { queue.withLockedValue { _ = $0.discard(conflationKey: conflationKey) } }
    func close(code: UInt16, reason: String, discardPending: Bool) {
        queue.withLockedValue { _ = $0.close(code: code, reason: reason, discardPending: discardPending) }
    }
    func abort() { aborts.withLockedValue { $0 += 1 } }
    func finish() { queue.withLockedValue { $0.finish() } }
    var isClosing: Bool { queue.withLockedValue { $0.isClosing || $0.isFinished } }
    var queuedBytes: Int { queue.withLockedValue { $0.bytes } }
    /// How many times the connection was cut without a handshake.
    var abortCount: Int { aborts.withLockedValue { $0 } }

    /// What the client receives now, as a socket drain would take it.
    func take() -> OutboxQueue.Taken { queue.withLockedValue { $0.take() } }

    /// The frames the client receives now, decoded; a close is reported as an `error` frame with code
    /// `unavailable` and the message "close <code> <reason>", so scenarios read as one list.
    func frames() throws -> [ServerFrame] {
        let taken = take()
        var frames = try taken.entries.map { try WireJSON.decodeServerFrame(Array($0.frame.payload.readableBytesView)) }
        if let close = taken.close {
            frames.append(.error(.init(re: nil, code: .unavailable, message: "close \(close.code) \(close.reason)")))
        }
        return frames
    }
}

/// Counts what the core reports, as the broker's Prometheus registry would.
final class CountingMetrics: HubMetrics {
    struct Counts: Equatable {
        var opened = 0
        var accepted = 0
        var closed = 0
        var rejected: [ErrorCode: Int] = [:]
        var untracked: [ServerFrame.UntrackedReason: Int] = [:]
        var keptCalls = 0
        var delivered = 0
        var conflated = 0
        var slowConsumers = 0
    }

    private let state = NIOLockedValueBox(Counts())

    var counts: Counts { state.withLockedValue { $0 } }

    func connectionOpened(admitted: Bool) { state.withLockedValue { $0.opened += 1; if admitted { $0.accepted += 1 } } }
    func connectionClosed() { state.withLockedValue { $0.closed += 1 } }
    func rejected(_ code: ErrorCode) { state.withLockedValue { $0.rejected[code, default: 0] += 1 } }
    func untracked(_ reason: ServerFrame.UntrackedReason) { state.withLockedValue { $0.untracked[reason, default: 0] += 1 } }
    func kept(_ fanOut: FanOutTally) {
        state.withLockedValue {
            $0.keptCalls += 1
            $0.delivered += fanOut.delivered
            $0.conflated += fanOut.conflated
            $0.slowConsumers += fanOut.overflowed
        }
    }
    func queued(_ result: EnqueueResult) {
        state.withLockedValue {
            if result == .conflated { $0.conflated += 1 }
            if result == .overflowed { $0.slowConsumers += 1 }
        }
    }
}

/// A hub with no transport, a hand-moved clock and fake sinks, and the donations and people of the scenarios.
final class HubFixture {
    static let home = Home(lat: -34.6037, lon: -58.3816, label: "Av. Corrientes 1234")
    static let institution = Institution(lat: -34.5875, lon: -58.4206, name: "Caritas Palermo")

    let volunteer = "vol@example.org"
    let donor = "donor@example.org"
    let clock = ManualClock()
    let instant = ManualInstant()
    let metrics = CountingMetrics()
    let settings: HubSettings
    let hub: Hub
    private var revision: Int64 = 0

    /// The limits the core's tests run with (the broker's own defaults live in its settings table, which the
    /// core does not see): the documented defaults at the time of writing, so the scenarios read as in production.
    static let settings = HubSettings(
        historySize: 32, arrivalRadiusMeters: 150, publishRate: 1, publishBurst: 5, presenceTimeoutMilliseconds: 60_000,
        maxSubscriptionsPerConnection: 16, outboxBytes: 262_144, slowConsumerStall: .seconds(10), maxConnectionsPerIdentity: 4,
        windowToleranceMilliseconds: 2_000, maxPositionAgeMilliseconds: 600_000)

    init(
        framing: Framing = .plain, cluster: (any ClusterLink)? = nil, events: TrackingEventRules? = nil,
        _ configure: (inout HubSettings) -> Void = { _ in }
    ) {
        var settings = Self.settings
        configure(&settings)
        self.settings = settings
        hub = Hub(settings: settings, metrics: metrics, cluster: cluster, clock: clock.wallClock, framing: framing, events: events)
    }

    /// Applies the next revision of donation `id`, or its deletion when `state` is `nil`.
    func move(_ id: String = "d-1", to state: DonationState?, donor: String? = nil, volunteer: String? = nil, incarnation: String? = nil) {
        revision += 1
        let donation = state.map {
            Donation(
                id: id, donor: donor ?? self.donor, volunteer: volunteer ?? self.volunteer, state: $0, home: Self.home,
                institution: Self.institution, createdAt: 0, updatedAt: 0, incarnation: incarnation)
        }
        hub.apply(DonationChange(id: id, revision: revision, old: nil, new: donation))
    }

    /// Opens a connection for `identity` whose frames go to a fresh fake sink.
    func connect(_ identity: String? = nil, expiresAt: Int64 = .max / 2000, limit: Int? = nil, stall: Duration? = nil) -> (ClientConnection, FakeSink) {
        let sink = FakeSink(limit: limit ?? settings.outboxBytes, stallLimit: stall ?? settings.slowConsumerStall, instant: instant)
        let connection = hub.connect(
            identity: identity ?? donor, expiresAt: expiresAt, sink: sink, logger: Logger(label: "test"))
        return (connection, sink)
    }

    /// A donor connected and subscribed to donation `id`, with the `subscribed` reply already read.
    func watcher(of id: String = "d-1", _ identity: String? = nil, limit: Int? = nil) throws -> (ClientConnection, FakeSink) {
        let (connection, sink) = connect(identity, limit: limit)
        XCTAssertNil(hub.subscribe(connection, .init(target: .donation(id))))
        XCTAssertEqual(try sink.frames().first?.type, "subscribed")
        return (connection, sink)
    }

    /// The bytes one position frame of the volunteer takes in a queue, to size a slow donor's outbox.
    var positionFrameSize: Int {
        let sample = position(metresFromHome: 900, timestamp: clock.now)
        return Framing.plain.prepare(PositionFrameEncoder.encode(channel: volunteer, seq: clock.now * 1000, position: sample)).size
    }

    /// Publishes a fix taken now (or at `takenAt`) `metres` north of the donor's home.
    @discardableResult
    func publish(metres: Double = 900, takenAt: Int64? = nil) -> Result<Hub.PublishOutcome, BrokerError> {
        hub.publish(as: volunteer, position: position(metresFromHome: metres, timestamp: takenAt ?? clock.now))
    }
}

/// A fix `metres` north of the scenarios' home.
func position(metresFromHome metres: Double, timestamp: Int64) -> Position {
    let point = Geodesy.destination(fromLat: HubFixture.home.lat, lon: HubFixture.home.lon, bearing: 0, distance: metres)
    return Position(lat: point.lat, lon: point.lon, accuracy: 5, speed: 8, heading: 180, timestamp: timestamp)
}
