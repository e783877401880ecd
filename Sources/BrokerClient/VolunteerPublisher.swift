import BrokerProtocol
import Foundation
import Logging
import Synchronization

/// Publishes a volunteer's fixes over one connection kept open across network changes, expired tokens and
/// broker restarts.
///
/// ```swift
/// let publisher = VolunteerPublisher(url: "wss://broker.example.org/v1/ws") { try await backend.freshVolunteerToken() }
/// let running = Task { await publisher.run() }
/// locationManager.onFix = { fix in Task { await publisher.publish(fix) } }
/// for await event in publisher.events {
///     if case .audience(let audience) = event { gps.cadence = audience.isWatched ? .seconds(5) : .seconds(60) }
/// }
/// ```
///
/// - While disconnected it keeps **only the newest fix** and sends it once connected again, unless it is older
///   than ``Options/maximumFixAge``: the broker judges a fix by when it was taken, so a queue of old fixes would
///   reach nobody (`before-window`, `too-old`) or show the donor where the volunteer was, not where they are.
/// - Each fix is sent with an `id`; the broker's `ack` says whether anyone can see it (`tracking`) and how many
///   donors' connections receive it (`watchers`): see ``Audience``.
/// - The token provider is called before the first connection, before every reconnect and after a 4001.
public final class VolunteerPublisher: Sendable {
    /// What the publisher tells the app.
    public enum Event: Sendable, Equatable {
        /// The link to the broker changed.
        case connection(ConnectionChange)
        /// An `ack` came: who sees the volunteer's fixes now. Yielded when it differs from the previous one.
        case audience(Audience)
        /// A fix was refused (`rate-limited`, `invalid-position`...); the connection goes on.
        case refused(ErrorCode, message: String)
        /// The publisher stopped for good: the reason.
        case stopped(String)
    }

    /// Who sees the volunteer's fixes, from the newest `ack`.
    public struct Audience: Sendable, Equatable {
        /// A donation of this volunteer is trackable and the fix was kept: donors may see it.
        public var tracking: Bool
        /// How many donor connections receive the fixes now.
        public var watchers: Int
        /// Why the fix reached nobody, when `tracking` is false.
        public var reason: ServerFrame.UntrackedReason?

        /// Whether a donor is looking now: when false, the app can take fixes less often to save the battery.
        public var isWatched: Bool { tracking && watchers > 0 }

        public init(tracking: Bool, watchers: Int, reason: ServerFrame.UntrackedReason? = nil) {
            self.tracking = tracking
            self.watchers = watchers
            self.reason = reason
        }
    }

    /// The numbers a publisher uses.
    public struct Options: Sendable {
        public var policy: ConnectionStateMachine.Policy
        /// A fix kept while disconnected is dropped instead of sent when it has grown older than this (the broker's
        /// default `max_position_age_seconds` is 600).
        public var maximumFixAge: Duration
        /// How often time is let pass when nothing arrives.
        public var tick: Duration

        public init(policy: ConnectionStateMachine.Policy = .init(), maximumFixAge: Duration = .seconds(600), tick: Duration = .milliseconds(250)) {
            self.policy = policy
            self.maximumFixAge = maximumFixAge
            self.tick = tick
        }
    }

    /// What is shared between ``publish(_:)`` and the task in ``run()``.
    private struct Outbox {
        var connection: BrokerConnection?
        /// The newest fix not sent yet.
        var pending: Position?
        /// The timestamp of the newest fix sent: an older one is never sent after it.
        var lastSent: Int64?
        var counter = 0
        var audience: Audience?
    }

    private let options: Options
    private let logger: Logger
    /// Opens each connection: the URL, the token provider and the open timeout, kept for every reconnect.
    private let connector: ReconnectingConnector
    private let random: any RandomNumberGenerator & Sendable
    private let outbox = Mutex(Outbox())
    private let stream: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation

    /// - Parameter token: gives the volunteer's token; called before each connection and after a 4001.
    public init(
        url: String, options: Options = Options(), logger: Logger = Logger(label: "volunteer-publisher"),
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(), token: @escaping @Sendable () async throws -> String
    ) {
        self.options = options
        self.logger = logger
        self.connector = ReconnectingConnector(url: url, openTimeout: options.policy.openTimeout, logger: logger, token: token)
        self.random = random
        (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(256))
    }

    /// What happens, for one consumer; finishes when ``run()`` returns.
    public var events: AsyncStream<Event> { stream }

    /// The newest audience the broker reported, if any ack came yet.
    public var audience: Audience? { outbox.withLock { $0.audience } }

    /// Sends `position` now if connected; otherwise keeps it as the one fix to send on reconnecting (replacing an
    /// older one). A fix older than one already sent is dropped: the donor's map never steps back.
    public func publish(_ position: Position) async {
        let send = outbox.withLock { box -> (BrokerConnection, String)? in
            if let lastSent = box.lastSent, position.timestamp <= lastSent { return nil }
            guard let connection = box.connection else {
                if box.pending.map({ $0.timestamp < position.timestamp }) ?? true { box.pending = position }
                return nil
            }
            box.lastSent = position.timestamp
            box.counter += 1
            return (connection, "p\(box.counter)")
        }
        guard let (connection, id) = send else { return }
        do {
            try await connection.send(.publish(.init(id: id, position: position)))
        } catch {
            keep(position)
        }
    }

    /// Keeps and reconnects until the task running it is cancelled or the token is refused for good. Call once.
    public func run() async {
        var machine = ConnectionStateMachine(policy: options.policy, random: random)
        var connector = connector
        var action = machine.start()
        var connectedOnce = false
        defer { continuation.finish() }
        while !Task.isCancelled {
            switch action {
            case .none, .closeDead:
                action = machine.ended(.dead("internal: no next step"), now: .now)
            case .stop(let reason, _):
                continuation.yield(.stopped(reason))
                return
            case .wait(let delay, let attempt, let reason):
                logger.info("reconnecting", metadata: ["in": "\(delay)", "attempt": "\(attempt)", "reason": "\(reason)"])
                continuation.yield(.connection(.reconnecting(delay: delay, attempt: attempt, reason: reason)))
                try? await Task.sleep(for: delay)
                action = machine.delayElapsed()
            case .connect(let keepalive, let renew):
                let connection: BrokerConnection
                switch await connector.open(keepalive: keepalive, renewToken: renew) {
                case .opened(let opened):
                    connection = opened
                case .failed(let ending):
                    action = machine.ended(ending, now: .now)
                    continue
                }
                machine.opened(now: .now)
                let (ending, abort) = await serve(connection, machine: &machine, connectedOnce: &connectedOnce)
                outbox.withLock { $0.connection = nil }
                if abort { await connection.abort() } else { await connection.close() }
                guard let ending else {
                    continuation.yield(.stopped("stopped"))
                    return
                }
                logger.info("connection lost", metadata: ["reason": "\(ConnectionStateMachine.describe(ending))"])
                action = machine.ended(ending, now: .now)
            }
        }
        continuation.yield(.stopped("stopped"))
    }

    /// Reads one connection's acks until it ends; `nil` when the task was cancelled.
    private func serve(
        _ connection: BrokerConnection, machine: inout ConnectionStateMachine, connectedOnce: inout Bool
    ) async -> (ConnectionStateMachine.Ending?, abort: Bool) {
        while !Task.isCancelled {
            guard let event = await connection.nextEvent(timeout: options.tick) else {
                if case .closeDead(let reason) = machine.tick(now: .now) { return (.dead(reason), true) }
                continue
            }
            switch event {
            case .closed(let code, let reason):
                return (.closed(code: code, reason: reason), false)
            case .undecodable:
                continue
            case .frame(.welcome(let welcome), _):
                machine.welcomed(heartbeatSeconds: welcome.heartbeat)
                continuation.yield(.connection(connectedOnce ? .reconnected(since: nil) : .connected))
                connectedOnce = true
                await flush(on: connection)
            case .frame(.ack(let ack), _):
                let audience = Audience(tracking: ack.tracking, watchers: ack.watchers, reason: ack.reason)
                let changed = outbox.withLock { box -> Bool in
                    defer { box.audience = audience }
                    return box.audience != audience
                }
                if changed { continuation.yield(.audience(audience)) }
            case .frame(.error(let error), _) where error.re != nil:
                continuation.yield(.refused(error.code, message: error.message))
            case .frame:
                continue
            }
        }
        return (nil, false)
    }

    /// Opens the outbox on `connection` and sends the fix kept while disconnected, if it is still recent.
    private func flush(on connection: BrokerConnection) async {
        let oldest = Int64((Date().timeIntervalSince1970 * 1000).rounded()) - options.maximumFixAge.milliseconds
        let send = outbox.withLock { box -> (Position, String)? in
            box.connection = connection
            guard let pending = box.pending else { return nil }
            box.pending = nil
            // `>=`: a fix whose sending failed is kept with `lastSent` already at its timestamp.
            guard pending.timestamp >= oldest, box.lastSent.map({ pending.timestamp >= $0 }) ?? true else { return nil }
            box.lastSent = pending.timestamp
            box.counter += 1
            return (pending, "p\(box.counter)")
        }
        guard let (position, id) = send else { return }
        do {
            try await connection.send(.publish(.init(id: id, position: position)))
        } catch {
            keep(position)
        }
    }

    /// Puts back a fix whose sending failed, unless a newer one is already waiting.
    private func keep(_ position: Position) {
        outbox.withLock { box in
            if box.pending.map({ $0.timestamp < position.timestamp }) ?? true { box.pending = position }
        }
    }
}

extension Duration {
    /// Whole milliseconds.
    var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
