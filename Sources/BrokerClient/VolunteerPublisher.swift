import BrokerProtocol
import Foundation
import Logging
import NIOConcurrencyHelpers

/// Publishes a volunteer's fixes over one connection kept open across network changes, expired tokens and
/// broker restarts.
///
/// ```swift
/// let publisher = VolunteerPublisher(url: "wss://broker.example.org/v1/ws") { try await backend.freshVolunteerToken() }
/// let running = Task { try await publisher.run() }
/// locationManager.onFix = { location in
///     Task {
///         let outcome = await publisher.publish(Position(location)).outcome   // when the broker has answered
///         if case .refused(let code, _)? = outcome?.result { log("the broker refused a fix: \(code)") }
///     }
/// }
/// for await event in publisher.events {
///     if case .audience(let audience) = event { gps.cadence = audience.isWatched ? .seconds(5) : .seconds(60) }
/// }
/// ```
///
/// - A fix stays pending until the broker's `ack` (or `error`) for it. When a connection ends first, the newest
///   fix not acknowledged is sent again on the next one, unless it is older than ``Options/maximumFixAge``; an
///   older fix is never sent after a newer one. Every fix handed over gets one ``FixOutcome``: accepted, refused
///   (with the broker's reason), superseded by a newer one, or dropped (too old, or the publisher stopped). The
///   ``FixReceipt`` that ``publish(_:)`` returns gives it to the caller; the `.fix` events, to every consumer.
/// - The broker's `ack` says whether anyone can see a fix (`tracking`) and how many donors' connections receive
///   it (`watchers`): see ``Audience``.
/// - The token provider is called when there is no token, when it is about to expire, and when the broker
///   refused it; not before every attempt.
/// - The app says when the network goes away or comes back and when it comes to the foreground
///   (``networkLost()``, ``networkAvailable()``, ``appEnteredForeground()``): no attempts while offline, an
///   attempt at once when it comes back.
/// - It wakes only when something is due: a frame, the socket's end, the app's word, a fix sent (its ack is then
///   awaited until ``Options/ackTimeout``), or the next attempt after a failure. Connected and idle it sleeps (the
///   keepalive's ping, every heartbeat, is the only periodic work); there is no polling tick.
public final class VolunteerPublisher: ConnectivityHooks, Sendable {
    /// What the publisher tells the app.
    public enum Event: Sendable, Equatable {
        /// The link to the broker changed.
        case connection(ConnectionChange)
        /// An `ack` came: who sees the volunteer's fixes now. Yielded when it differs from the previous one.
        case audience(Audience)
        /// What became of one fix handed to ``publish(_:)``.
        case fix(FixOutcome)
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

    /// What became of one fix.
    public struct FixOutcome: Sendable, Equatable {
        /// What happened to it.
        public enum Result: Sendable, Equatable {
            /// The broker acknowledged it: kept under `seq` for the audience given, or kept for nobody
            /// (`audience.tracking` false, with the reason).
            case accepted(seq: Int64?, audience: Audience)
            /// The broker refused it (`rate-limited`, `invalid-position`...); it is not sent again.
            case refused(ErrorCode, message: String)
            /// A newer fix was handed over before this one was acknowledged: only the newer one is sent.
            case superseded
            /// Not sent: older than ``Options/maximumFixAge`` when a connection came, or the publisher stopped.
            case dropped(reason: String)
        }

        /// The fix, as handed over.
        public var position: Position
        public var result: Result

        public init(position: Position, result: Result) {
            self.position = position
            self.result = result
        }
    }

    /// The numbers a publisher uses.
    public struct Options: Sendable {
        public var policy: ConnectionStateMachine.Policy
        /// A fix kept while disconnected is dropped instead of sent when it has grown older than this (the broker's
        /// default `max_position_age_seconds` is 600).
        public var maximumFixAge: Duration
        /// A fix sent and not acknowledged within this means the path is dead: the connection is replaced.
        public var ackTimeout: Duration
        /// How many events may wait for each consumer of ``VolunteerPublisher/events`` (the oldest are dropped beyond).
        public var bufferLimit: Int

        public init(
            policy: ConnectionStateMachine.Policy = .init(), maximumFixAge: Duration = .seconds(600), ackTimeout: Duration = .seconds(10),
            bufferLimit: Int = 256
        ) {
            self.policy = policy
            self.maximumFixAge = maximumFixAge
            self.ackTimeout = ackTimeout
            self.bufferLimit = bufferLimit
        }
    }

    private let options: Options
    private let logger: Logger
    /// Opens each connection: the URL, the token provider and the open timeout, kept for every reconnect.
    private let connector: ReconnectingConnector
    private let random: any RandomNumberGenerator & Sendable
    private let outbox = NIOLockedValueBox(FixOutbox<BrokerConnection>())
    private let broadcast: EventBroadcast<Event>
    private let control = LinkControl()
    private let linkState = NIOLockedValueBox(LinkState.connecting)
    /// The newest outcome reported, for ``lastOutcome``.
    private let newestOutcome = NIOLockedValueBox<FixOutcome?>(nil)
    /// The receipts of the fixes not settled yet, by the outbox's ticket. Taken inside the outbox's lock (never the
    /// other way round), so a receipt is in place before its fix can be settled.
    private let receipts = NIOLockedValueBox<[Int: FixSettlement]>([:])
    /// How many times the run loop woke on an open connection with no frame: to hold it to waking only when
    /// something is due.
    private let wakeUpCount = NIOLockedValueBox(0)

    /// - Parameters:
    ///   - tls: for `wss://`: whom to trust (the system's roots when `nil`).
    ///   - token: gives the volunteer's token; called when there is none, when it is about to expire and after the
    ///     broker refused it.
    public init(
        url: String, options: Options = Options(), tls: BrokerTLS? = nil, logger: Logger = Logger(label: "volunteer-publisher"),
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(), token: @escaping @Sendable () async throws -> String
    ) {
        self.options = options
        self.logger = logger
        self.connector = ReconnectingConnector(url: url, openTimeout: options.policy.openTimeout, tls: tls, logger: logger, token: token)
        self.random = random
        broadcast = EventBroadcast(limit: options.bufferLimit)
    }

    /// What happens, for a new consumer: every access is a stream of its own; all finish when ``run()`` returns.
    public var events: AsyncStream<Event> { broadcast.subscribe() }

    /// The newest audience the broker reported, if any ack came yet.
    public var audience: Audience? { outbox.withLockedValue { $0.audience } }

    /// Where the link to the broker stands now (the `.connection` events, as a state).
    public var link: LinkState { linkState.withLockedValue { $0 } }

    /// What became of the newest fix settled, if any was yet (the `.fix` events, as a state): a consumer that
    /// starts following after a fix was settled still learns it.
    public var lastOutcome: FixOutcome? { newestOutcome.withLockedValue { $0 } }

    /// How many times the run loop woke on an open connection without a frame (a deadline, the app's word, a fix sent).
    var idleWakeUps: Int { wakeUpCount.withLockedValue { $0 } }

    /// Sends `position` now if connected; otherwise keeps it as the one fix to send on reconnecting (an older one
    /// kept is then superseded). A fix not newer than one already handed over is superseded at once: the
    /// donor's map never steps back.
    ///
    /// Returns once the fix is handed over (and written, when connected), not when the broker answers: fixes
    /// published one after another keep their order. The receipt's ``FixReceipt/outcome`` waits for the answer;
    /// ``FixReceipt`` says when it comes.
    @discardableResult
    public func publish(_ position: Position) async -> FixReceipt {
        let settlement = FixSettlement()
        let (send, outcomes, firstAwaited) = outbox.withLockedValue { box in
            let idle = box.oldestUnacknowledged == nil
            let handed = box.hand(position)
            receipts.withLockedValue { $0[handed.ticket] = settlement }
            return (handed.send, handed.outcomes, idle && handed.send != nil)
        }
        report(outcomes)
        if let (connection, id) = send {
            // A failed write is noticed by the connection's end or the missing ack; the fix stays pending meanwhile.
            try? await connection.send(.publish(.init(id: id, position: position)))
            // The run loop sleeps until its next deadline: now there is one, this fix's ack.
            if firstAwaited { control.wakeServing() }
        }
        return FixReceipt(position: position, slot: settlement)
    }

    public func networkLost() { control.networkLost() }
    public func networkAvailable() { control.networkAvailable() }
    public func appEnteredForeground() { control.foreground() }
    public func reconnectNow() { control.reconnect() }

    /// Keeps and reconnects until the task running it is cancelled or the token is refused for good.
    /// - Throws: ``BrokerClientError`` (``BrokerClientError/Kind/alreadyRunning``) when called a second time.
    public func run() async throws {
        guard control.claimRun() else { throw BrokerClientError.alreadyRunning }
        var link = LinkSupervisor(
            machine: ConnectionStateMachine(policy: options.policy, random: random), connector: connector, control: control, logger: logger)
        var connectedOnce = false
        defer {
            report(outbox.withLockedValue { $0.stop() })
            broadcast.finish()
        }
        while true {
            switch await link.nextConnection(announce: { announce($0) }, due: { nil }, idle: {}) {
            case .cancelled:
                broadcast.yield(.stopped("stopped"))
                return
            case .stop(let reason, _):
                broadcast.yield(.stopped(reason))
                return
            case .opened(let connection):
                let (ending, abort, immediately) = await serve(connection, link: &link, connectedOnce: &connectedOnce)
                report(outbox.withLockedValue { $0.disconnected() })
                if abort { await connection.abort() } else { await connection.close() }
                guard let ending else {
                    link.stop()
                    broadcast.yield(.stopped("stopped"))
                    return
                }
                link.lost(ending, immediately: immediately)
            }
        }
    }

    /// Reads one connection's acks until it ends; a `nil` ending when the task was cancelled.
    private func serve(
        _ connection: BrokerConnection, link: inout LinkSupervisor, connectedOnce: inout Bool
    ) async -> (ConnectionStateMachine.Ending?, abort: Bool, immediately: Bool) {
        while !Task.isCancelled {
            if let verdict = link.check(connection) { return (verdict.ending, true, verdict.immediately) }
            let ackDeadline = outbox.withLockedValue { $0.oldestUnacknowledged }.map { $0 + options.ackTimeout }
            if let ackDeadline, ContinuousClock.now >= ackDeadline {
                return (.dead("no ack within \(options.ackTimeout)"), true, true)
            }
            let due = [link.nextDeadline, ackDeadline].compactMap { $0 }.min()
            guard let event = await connection.nextEvent(until: due) else {
                wakeUpCount.withLockedValue { $0 += 1 }
                continue
            }
            switch event {
            case .closed(let code, let reason):
                return (.closed(code: code, reason: reason), false, false)
            case .undecodable:
                continue
            case .frame(.welcome(let welcome), _):
                link.welcomed(heartbeatSeconds: welcome.heartbeat)
                announce(connectedOnce ? .reconnected(since: nil) : .connected)
                connectedOnce = true
                await flush(on: connection)
            case .frame(.ack(let ack), _):
                let audience = Audience(tracking: ack.tracking, watchers: ack.watchers, reason: ack.reason)
                let (outcome, changed) = outbox.withLockedValue { box -> (FixOutbox<BrokerConnection>.Settled?, Bool) in
                    defer { box.audience = audience }
                    return (box.acknowledged(ack.re, result: .accepted(seq: ack.seq, audience: audience)), box.audience != audience)
                }
                if let outcome { report([outcome]) }
                if changed { broadcast.yield(.audience(audience)) }
            case .frame(.error(let error), _) where error.re != nil:
                if let outcome = outbox.withLockedValue({ $0.acknowledged(error.re, result: .refused(error.code, message: error.message)) }) {
                    report([outcome])
                }
            case .frame:
                continue
            }
        }
        return (nil, false, false)
    }

    /// Opens the outbox on `connection` and sends the fix still pending, if it is recent enough.
    private func flush(on connection: BrokerConnection) async {
        let oldest = Int64((Date().timeIntervalSince1970 * 1000).rounded()) - options.maximumFixAge.milliseconds
        let (send, outcomes) = outbox.withLockedValue { $0.connected(connection, oldestTimestamp: oldest) }
        report(outcomes)
        guard let (position, id) = send else { return }
        try? await connection.send(.publish(.init(id: id, position: position)))
    }

    private func announce(_ change: ConnectionChange) {
        linkState.withLockedValue { $0 = LinkState.after(change, now: DonorScreen.wallClock()) }
        broadcast.yield(.connection(change))
    }

    private func report(_ settled: [FixOutbox<BrokerConnection>.Settled]) {
        for fix in settled {
            newestOutcome.withLockedValue { $0 = fix.outcome }
            broadcast.yield(.fix(fix.outcome))
            receipts.withLockedValue { $0.removeValue(forKey: fix.ticket) }?.settle(fix.outcome)
        }
    }
}

extension Duration {
    /// Whole milliseconds.
    var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
