import BrokerProtocol
import Foundation
import Logging

/// Follows one donation for its donor, across reconnects, and yields what happens as ``DonationEvent``s.
///
/// ```swift
/// let watcher = DonationWatcher(url: "wss://broker.example.org/v1/ws", target: .donation("d-123")) {
///     try await backend.freshDonorToken()
/// }
/// let running = Task { await watcher.run() }
/// for await event in watcher { show(event) }   // ends after `.ended`
/// ```
///
/// - After every reconnect it subscribes again with `since` = the highest seq seen, so missed positions come
///   back; positions seen before are dropped, and positions are yielded in rising seq order.
/// - It ends on `DELIVERED`, `CANCELLED`, revocation (`volunteer-changed`), deletion, a refusal it cannot get
///   past (the first subscribe refused, or a later one refused with anything but `not-trackable`), a token the
///   broker refuses even fresh, or when the task running ``run()`` is cancelled.
/// - The reconnect rules are ``ConnectionStateMachine``'s.
///
/// One consumer iterates it; events wait in a buffer of ``Options/bufferLimit`` (the oldest are dropped beyond).
public final class DonationWatcher: AsyncSequence, Sendable {
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
        /// How often time is let pass (staleness, deadlines) when nothing arrives.
        public var tick: Duration
        /// How many events may wait for the consumer.
        public var bufferLimit: Int

        public init(
            policy: ConnectionStateMachine.Policy = .init(),
            staleAfter: Duration = .milliseconds(DonorViewRules.staleAfterMilliseconds),
            subscribeTimeout: Duration = .milliseconds(DonorViewRules.subscribeTimeoutMilliseconds),
            notTrackableRetry: Duration = .milliseconds(DonorViewRules.notTrackableRetryMilliseconds), tick: Duration = .milliseconds(250), bufferLimit: Int = 1024
        ) {
            self.policy = policy
            self.staleAfter = staleAfter
            self.subscribeTimeout = subscribeTimeout
            self.notTrackableRetry = notTrackableRetry
            self.tick = tick
            self.bufferLimit = bufferLimit
        }
    }

    private let target: ClientFrame.Target
    private let options: Options
    private let logger: Logger
    /// Opens each connection: the URL, the token provider and the open timeout, kept for every reconnect.
    private let connector: ReconnectingConnector
    private let random: any RandomNumberGenerator & Sendable
    private let stream: AsyncStream<DonationEvent>
    private let continuation: AsyncStream<DonationEvent>.Continuation

    /// - Parameters:
    ///   - url: the broker's WebSocket address (`wss://host/v1/ws`).
    ///   - target: the donation (or the volunteer's channel) to watch.
    ///   - token: gives the donor's token; called before the first connection and before every reconnect.
    public init(
        url: String, target: ClientFrame.Target, options: Options = Options(), logger: Logger = Logger(label: "donation-watcher"),
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(), token: @escaping @Sendable () async throws -> String
    ) {
        self.target = target
        self.options = options
        self.logger = logger
        self.connector = ReconnectingConnector(url: url, openTimeout: options.policy.openTimeout, logger: logger, token: token)
        self.random = random
        (stream, continuation) = AsyncStream.makeStream(of: DonationEvent.self, bufferingPolicy: .bufferingNewest(Swift.max(1, options.bufferLimit)))
    }

    public func makeAsyncIterator() -> AsyncStream<DonationEvent>.Iterator {
        stream.makeAsyncIterator()
    }

    /// Watches until the tracking ends or cannot go on, yielding events meanwhile; returns why it ended. Call once.
    @discardableResult
    public func run() async -> End {
        var session = Session(
            options: options, connector: connector,
            random: random)
        let end = await session.run(self)
        continuation.finish()
        return end
    }

    fileprivate func yield(_ events: [DonationEvent]) {
        for event in events { continuation.yield(event) }
    }

    /// One run's mutable state, owned by the task that runs it.
    private struct Session {
        let options: Options
        var machine: ConnectionStateMachine
        var tracker: DonationTracker
        var connector: ReconnectingConnector
        var subscribedOnce = false
        var requests = 0

        /// How one connection ended.
        enum Outcome {
            case ended(End)
            /// Lost; `abort` when it is taken as dead (a close handshake would hang).
            case lost(ConnectionStateMachine.Ending, abort: Bool)
        }

        init(options: Options, connector: ReconnectingConnector, random: any RandomNumberGenerator & Sendable) {
            self.options = options
            self.connector = connector
            machine = ConnectionStateMachine(policy: options.policy, random: random)
            tracker = DonationTracker(staleAfterMilliseconds: Self.milliseconds(options.staleAfter))
        }

        mutating func run(_ watcher: DonationWatcher) async -> End {
            var action = machine.start()
            while true {
                if Task.isCancelled { return finish(.stopped, watcher) }
                switch action {
                case .none, .closeDead:
                    // Not reachable between connections: there is no open one to close. Connect again.
                    action = machine.ended(.dead("internal: no next step"), now: .now)
                case .stop(let reason, let ending):
                    if case .refused(401, let message) = ending { return finish(.unauthorized(message), watcher) }
                    return finish(.connectionFailed(reason), watcher)
                case .wait(let delay, let attempt, let reason):
                    watcher.logger.info("reconnecting", metadata: ["in": "\(delay)", "attempt": "\(attempt)", "reason": "\(reason)"])
                    watcher.yield([.connection(.reconnecting(delay: delay, attempt: attempt, reason: reason))])
                    await pass(delay, watcher)
                    action = machine.delayElapsed()
                case .connect(let keepalive, let renew):
                    let connection: BrokerConnection
                    switch await connector.open(keepalive: keepalive, renewToken: renew) {
                    case .opened(let opened):
                        connection = opened
                    case .failed(let ending):
                        if !subscribedOnce, case .refused(let status, let message) = ending, status == 401 || status == 404 {
                            return finish(status == 401 ? .unauthorized(message) : .connectionFailed(message), watcher)
                        }
                        action = machine.ended(ending, now: .now)
                        continue
                    }
                    machine.opened(now: .now)
                    let outcome = await watch(connection, watcher)
                    switch outcome {
                    case .ended(let end):
                        await connection.close()
                        return finish(end, watcher)
                    case .lost(let ending, let abort):
                        if abort { await connection.abort() } else { await connection.close() }
                        watcher.logger.info("connection lost", metadata: ["reason": "\(ConnectionStateMachine.describe(ending))"])
                        action = machine.ended(ending, now: .now)
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
                let now = ContinuousClock.now
                if let at = resubscribeAt, now >= at {
                    resubscribeAt = nil
                    do {
                        pending = try await subscribe(connection, watcher)
                    } catch {
                        return .lost(.closed(code: nil, reason: "could not send subscribe: \(error)"), abort: true)
                    }
                }
                guard let event = await connection.nextEvent(timeout: options.tick) else {
                    let now = ContinuousClock.now
                    if case .closeDead(let reason) = machine.tick(now: now) { return .lost(.dead(reason), abort: true) }
                    if let pending, now - pending.sentAt > options.subscribeTimeout {
                        return .lost(.dead("no answer to subscribe within \(options.subscribeTimeout)"), abort: true)
                    }
                    watcher.yield(tracker.tick(now: Self.wallClock()))
                    continue
                }
                switch event {
                case .closed(let code, let reason):
                    return .lost(.closed(code: code, reason: reason), abort: false)
                case .undecodable(let text):
                    // A newer broker may send frames this client does not know: skip them.
                    watcher.logger.debug("skipped an unknown frame", metadata: ["text": "\(text.prefix(200))"])
                case .frame(.welcome(let welcome), _):
                    machine.welcomed(heartbeatSeconds: welcome.heartbeat)
                    do {
                        pending = try await subscribe(connection, watcher)
                    } catch {
                        return .lost(.closed(code: nil, reason: "could not send subscribe: \(error)"), abort: true)
                    }
                case .frame(.error(let error), _) where error.re != nil && error.re == pending?.id:
                    pending = nil
                    if !subscribedOnce { return .ended(.refused(error.code, message: error.message)) }
                    switch error.code {
                    case .notTrackable:
                        watcher.yield(tracker.notTrackable())
                        resubscribeAt = .now + options.notTrackableRetry
                    case .unavailable, .internal, .rateLimited, .limitReached:
                        return .lost(.closed(code: nil, reason: "the broker could not subscribe now (\(error.code.rawValue)): \(error.message)"), abort: false)
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

        /// Waits `delay`, letting time pass for staleness; returns early when cancelled.
        mutating func pass(_ delay: Duration, _ watcher: DonationWatcher) async {
            let end = ContinuousClock.now + delay
            while !Task.isCancelled, ContinuousClock.now < end {
                try? await Task.sleep(for: Swift.min(options.tick, end - .now))
                watcher.yield(tracker.tick(now: Self.wallClock()))
            }
        }

        mutating func finish(_ end: End, _ watcher: DonationWatcher) -> End {
            machine.stop()
            watcher.yield(tracker.finish(end))
            return tracker.ended ?? end
        }

        static func wallClock() -> Int64 {
            Int64((Date().timeIntervalSince1970 * 1000).rounded())
        }

        static func milliseconds(_ duration: Duration) -> Int64 {
            duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        }
    }
}
