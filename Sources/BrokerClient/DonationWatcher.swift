import BrokerProtocol
import Foundation
import Logging
import NIOConcurrencyHelpers
import TrackingRules

/// Follows one donation for its donor, across reconnects, and yields what happens as ``DonationEvent``s.
///
/// ```swift
/// let watcher = DonationWatcher(url: "wss://broker.example.org/v1/ws", target: .donation("d-123")) {
///     try await backend.freshDonorToken()
/// }
/// let running = Task { try await watcher.run() }
/// for await event in watcher { show(event) }   // ends after `.ended`
/// ```
///
/// - After every reconnect it subscribes again with `since` = the highest seq seen, so missed positions come
///   back; positions seen before are dropped, and positions are yielded in rising seq order.
/// - It ends on `DELIVERED`, `CANCELLED`, revocation (`volunteer-changed`), deletion, a refusal it cannot get
///   past (the first subscribe refused, or a later one refused with anything but `not-trackable`), a token the
///   broker refuses even fresh, or when the task running ``run()`` is cancelled.
/// - A paused trip is a subscription like any other (`tracking: false`): the watcher waits for the broker's
///   `state` frame. A broker older than that answers a subscribe during a pause with `not-trackable`; the
///   watcher then asks again every ``Options/notTrackableRetry``.
/// - The reconnect rules are ``ConnectionStateMachine``'s, through the loop it shares with ``VolunteerPublisher``;
///   the app's network and lifecycle hooks (``ConnectivityHooks``) apply.
/// - ``screen`` is the donor's screen state, kept up to date from the same events.
/// - It wakes only when something is due: a frame, the socket's end, the app's word, or the earliest deadline
///   among the `welcome` or `subscribe` answer awaited, the next attempt after a failure, a resubscribe, and the
///   moment the newest position grows stale. Connected and idle it sleeps (the keepalive's ping, every heartbeat,
///   is the only periodic work); there is no polling tick.
///
/// Any number of consumers may iterate it, each from the moment it starts (the first one from the start); each
/// has a buffer of ``Options/bufferLimit`` events (the oldest are dropped beyond). Cancelling one leaves the
/// others and the connection alone.
public final class DonationWatcher: AsyncSequence, ConnectivityHooks, Sendable {
    public typealias Element = DonationEvent

    /// Why watching ended.
    public typealias End = WatchEnd

    /// The numbers a watcher uses.
    public struct Options: Sendable {
        /// The reconnect rules' numbers.
        public var policy: ConnectionStateMachine.Policy
        /// A position older than this, while tracking is on, is announced as stale.
        public var staleAfter: Duration
        /// How long the answer to `subscribe` may take before the connection is taken as dead.
        public var subscribeTimeout: Duration
        /// How often to ask again while a subscribe after a reconnect is answered `not-trackable` (a paused trip).
        public var notTrackableRetry: Duration
        /// How many events may wait for each consumer (the oldest are dropped beyond).
        public var bufferLimit: Int

        public init(
            policy: ConnectionStateMachine.Policy = .init(),
            staleAfter: Duration = .milliseconds(DonorViewRules.staleAfterMilliseconds),
            subscribeTimeout: Duration = .milliseconds(DonorViewRules.subscribeTimeoutMilliseconds),
            notTrackableRetry: Duration = .milliseconds(DonorViewRules.notTrackableRetryMilliseconds), bufferLimit: Int = 1024
        ) {
            self.policy = policy
            self.staleAfter = staleAfter
            self.subscribeTimeout = subscribeTimeout
            self.notTrackableRetry = notTrackableRetry
            self.bufferLimit = bufferLimit
        }
    }

    private let target: ClientFrame.Target
    private let options: Options
    private let logger: Logger
    /// Opens each connection: the URL, the token provider and the open timeout, kept for every reconnect.
    private let connector: ReconnectingConnector
    private let random: any RandomNumberGenerator & Sendable
    private let broadcast: EventBroadcast<DonationEvent>
    private let control = LinkControl()
    private let screenState = NIOLockedValueBox(DonorScreen())
    /// How many times the run loop woke on an open connection with no frame: to hold it to waking only when
    /// something is due.
    private let wakeUpCount = NIOLockedValueBox(0)

    /// - Parameters:
    ///   - url: the broker's WebSocket address (`wss://host/v1/ws`).
    ///   - target: the donation (or the volunteer's channel) to watch.
    ///   - tls: for `wss://`: whom to trust (the system's roots when `nil`).
    ///   - token: gives the donor's token; called when there is none, when it is about to expire and after the
    ///     broker refused it.
    public init(
        url: String, target: ClientFrame.Target, options: Options = Options(), tls: BrokerTLS? = nil,
        logger: Logger = Logger(label: "donation-watcher"),
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(), token: @escaping @Sendable () async throws -> String
    ) {
        self.target = target
        self.options = options
        self.logger = logger
        self.connector = ReconnectingConnector(url: url, openTimeout: options.policy.openTimeout, tls: tls, logger: logger, token: token)
        self.random = random
        broadcast = EventBroadcast(limit: options.bufferLimit)
    }

    /// A new consumer's events: from now on (the first consumer: from the start), until ``run()`` returns.
    public func makeAsyncIterator() -> AsyncStream<DonationEvent>.Iterator {
        broadcast.subscribe().makeAsyncIterator()
    }

    /// What the donor's screen shows now, at `now` (milliseconds since the epoch: staleness depends on it).
    public func screen(now: Int64 = DonorScreen.wallClock()) -> DonorScreen {
        screenState.withLockedValue { $0.at(now) }
    }

    /// How many times the run loop woke on an open connection without a frame (a deadline, the app's word).
    var idleWakeUps: Int { wakeUpCount.withLockedValue { $0 } }

    public func networkLost() { control.networkLost() }
    public func networkAvailable() { control.networkAvailable() }
    public func appEnteredForeground() { control.foreground() }
    public func reconnectNow() { control.reconnect() }

    /// Watches until the tracking ends or cannot go on, yielding events meanwhile; returns why it ended.
    /// - Throws: ``BrokerClientError`` (``BrokerClientError/Kind/alreadyRunning``) when called a second time.
    @discardableResult
    public func run() async throws -> End {
        guard control.claimRun() else { throw BrokerClientError.alreadyRunning }
        var session = Session(options: options, connector: connector, control: control, random: random, logger: logger)
        let end = await session.run(self)
        broadcast.finish()
        return end
    }

    fileprivate func yield(_ events: [DonationEvent]) {
        for event in events {
            screenState.withLockedValue { $0.apply(event, now: DonorScreen.wallClock()) }
            broadcast.yield(event)
        }
    }

    /// One run's mutable state, owned by the task that runs it.
    private struct Session {
        let options: Options
        var link: LinkSupervisor
        var tracker: DonationTracker
        var subscribedOnce = false
        var requests = 0

        /// How one connection ended.
        enum Outcome {
            case ended(End)
            /// Lost; `abort` when it is taken as dead (a close handshake would hang); `immediately` to connect
            /// again at once (the app's nudge).
            case lost(ConnectionStateMachine.Ending, abort: Bool, immediately: Bool)
        }

        init(options: Options, connector: ReconnectingConnector, control: LinkControl, random: any RandomNumberGenerator & Sendable, logger: Logger) {
            self.options = options
            link = LinkSupervisor(
                machine: ConnectionStateMachine(policy: options.policy, random: random), connector: connector, control: control,
                logger: logger)
            tracker = DonationTracker(staleAfterMilliseconds: options.staleAfter.milliseconds)
        }

        mutating func run(_ watcher: DonationWatcher) async -> End {
            while true {
                var tracker = tracker
                let step = await link.nextConnection(
                    announce: { watcher.yield([.connection($0)]) }, due: { Self.instant(ofWallClock: tracker.nextStaleness) },
                    idle: { watcher.yield(tracker.tick(now: DonorScreen.wallClock())) })
                self.tracker = tracker
                switch step {
                case .cancelled:
                    return finish(.stopped, watcher)
                case .stop(let reason, let ending):
                    if case .refused(401, let message) = ending { return finish(.unauthorized(message), watcher) }
                    if !subscribedOnce, case .refused(404, let message) = ending { return finish(.connectionFailed(message), watcher) }
                    return finish(.connectionFailed(reason), watcher)
                case .opened(let connection):
                    switch await watch(connection, watcher) {
                    case .ended(let end):
                        await connection.close()
                        return finish(end, watcher)
                    case .lost(let ending, let abort, let immediately):
                        if abort { await connection.abort() } else { await connection.close() }
                        link.lost(ending, immediately: immediately)
                    }
                }
            }
        }

        /// Follows the donation on one connection until it ends or is lost.
        mutating func watch(_ connection: BrokerConnection, _ watcher: DonationWatcher) async -> Outcome {
            var pending: (id: String, since: Int64?, sentAt: ContinuousClock.Instant)?
            var resubscribeAt: ContinuousClock.Instant?
            while true {
                if Task.isCancelled { return .ended(.stopped) }
                if let verdict = link.check(connection) { return .lost(verdict.ending, abort: true, immediately: verdict.immediately) }
                if let at = resubscribeAt, ContinuousClock.now >= at {
                    resubscribeAt = nil
                    do {
                        pending = try await subscribe(connection, watcher)
                    } catch {
                        return .lost(.closed(code: nil, reason: "could not send subscribe: \(error)"), abort: true, immediately: false)
                    }
                }
                let subscribeDeadline = pending.map { $0.sentAt + options.subscribeTimeout }
                if let subscribeDeadline, ContinuousClock.now >= subscribeDeadline {
                    return .lost(.dead("no answer to subscribe within \(options.subscribeTimeout)"), abort: true, immediately: false)
                }
                watcher.yield(tracker.tick(now: DonorScreen.wallClock()))
                let due = [link.nextDeadline, subscribeDeadline, resubscribeAt, Self.instant(ofWallClock: tracker.nextStaleness)].compactMap { $0 }.min()
                guard let event = await connection.nextEvent(until: due) else {
                    watcher.wakeUpCount.withLockedValue { $0 += 1 }
                    continue
                }
                switch event {
                case .closed(let code, let reason):
                    return .lost(.closed(code: code, reason: reason), abort: false, immediately: false)
                case .undecodable(let text):
                    // A newer broker may send frames this client does not know: skip them.
                    watcher.logger.debug("skipped an unknown frame", metadata: ["text": "\(text.prefix(200))"])
                case .frame(.welcome(let welcome), _):
                    link.welcomed(heartbeatSeconds: welcome.heartbeat)
                    do {
                        pending = try await subscribe(connection, watcher)
                    } catch {
                        return .lost(.closed(code: nil, reason: "could not send subscribe: \(error)"), abort: true, immediately: false)
                    }
                case .frame(.error(let error), _) where error.re != nil && error.re == pending?.id:
                    pending = nil
                    if !subscribedOnce { return .ended(.refused(error.code, message: error.message)) }
                    switch error.code {
                    case .notTrackable:
                        // Only a broker that refuses subscribes during a pause says this: ask again now and then.
                        watcher.yield(tracker.notTrackable())
                        resubscribeAt = .now + options.notTrackableRetry
                    case .unavailable, .internal, .rateLimited, .limitReached:
                        return .lost(
                            .closed(code: nil, reason: "the broker could not subscribe now (\(error.code.rawValue)): \(error.message)"), abort: false,
                            immediately: false)
                    default:
                        return .ended(.refusedAfterReconnect(error.code, message: error.message))
                    }
                case .frame(.subscribed(let subscribed), _) where subscribed.re != nil && subscribed.re == pending?.id:
                    let since = pending?.since
                    pending = nil
                    watcher.yield([.connection(subscribedOnce ? .reconnected(since: since) : .connected)])
                    subscribedOnce = true
                    watcher.yield(tracker.subscribed(subscribed, since: since))
                case .frame(let frame, _):
                    watcher.yield(tracker.apply(frame))
                    if let end = tracker.ended { return .ended(end) }
                }
            }
        }

        /// Sends `subscribe`, with `since` once positions were seen.
        mutating func subscribe(_ connection: BrokerConnection, _ watcher: DonationWatcher) async throws -> (id: String, since: Int64?, sentAt: ContinuousClock.Instant) {
            requests += 1
            let id = "s\(requests)"
            let since = tracker.highestSeq
            try await connection.send(.subscribe(.init(id: id, target: watcher.target, since: since)))
            return (id, since, .now)
        }

        /// The monotonic instant of a wall-clock moment (milliseconds since the epoch), for a timer.
        static func instant(ofWallClock milliseconds: Int64?) -> ContinuousClock.Instant? {
            milliseconds.map { ContinuousClock.now + .milliseconds($0 - DonorScreen.wallClock()) }
        }

        mutating func finish(_ end: End, _ watcher: DonationWatcher) -> End {
            link.stop()
            watcher.yield(tracker.finish(end))
            return tracker.ended ?? end
        }
    }
}
