import BrokerProtocol
import TrackingRules

/// The reconnect rules shared by ``DonationWatcher`` and ``VolunteerPublisher``: when to connect, how long to
/// wait after a failure, when a connection is dead, and which endings are worth another try.
///
/// A value type with no I/O and no clock of its own: its owner reports what happened (with the time) and does
/// what the returned ``Action`` says. So every rule is tested without sockets or sleeps.
///
/// - Backoff: full jitter (a delay drawn uniformly from zero up to `initialDelay × 2^(failures-1)`, capped at
///   `maximumDelay`), so a fleet of phones cut off by one broker restart does not come back in one burst.
/// - Liveness: the broker pings every `heartbeat` seconds (announced by `welcome`). A connection is dead when
///   nothing at all has arrived for two heartbeats. The WebSocket layer (WSClient) keeps ping and pong frames to
///   itself, so the owner enforces the rule through the transport: it opens each connection with a keepalive of
///   ``keepalive`` (a ping every period; no answer by the next one closes the socket), which bounds the silence
///   it tolerates by two periods. Before `welcome`, ``openDeadline`` bounds the wait for it.
/// - Endings: see ``verdict(for:)``: retry, new token then retry, or stop.
/// - The network's return: ``connectivityReturned(now:)`` cuts a wait short and starts the backoff over, at most
///   one attempt per ``Policy/minimumAttemptGap`` (the owner reports each attempt's start with ``attempting(now:)``).
public struct ConnectionStateMachine: Sendable {
    /// The numbers the rules use. The defaults suit a phone; tests shrink them.
    public struct Policy: Sendable, Equatable {
        /// The largest delay before the first retry (full jitter draws below it).
        public var initialDelay: Duration
        /// The longest delay between attempts.
        public var maximumDelay: Duration
        /// The keepalive used until a `welcome` announced the broker's heartbeat (10 s: a broker configured with
        /// the default 30 s is then pinged a little more often on the first connection only).
        public var assumedHeartbeat: Duration
        /// How long `welcome` may take after the socket opened.
        public var openTimeout: Duration
        /// How many failed attempts are allowed before the first connection ever succeeded; `nil` retries forever.
        /// A command-line tool sets 1 to report a wrong address at once; an app leaves it `nil`.
        public var attemptsBeforeFirstConnection: Int?
        /// The least time between the starts of two attempts that the network coming back, the app coming to the
        /// foreground or ``VolunteerPublisher/reconnectNow()`` ask for: a flapping network cannot turn into a flood.
        public var minimumAttemptGap: Duration
        /// When the network comes back or the app comes to the foreground, an open connection on which nothing
        /// arrived for this long is taken as dead and replaced at once, instead of after two heartbeats.
        public var silenceBeforeReplacing: Duration

        public init(
            initialDelay: Duration = .milliseconds(DonorViewRules.backoffInitialMilliseconds),
            maximumDelay: Duration = .milliseconds(DonorViewRules.backoffCapMilliseconds),
            assumedHeartbeat: Duration = .seconds(10), openTimeout: Duration = .seconds(10),
            attemptsBeforeFirstConnection: Int? = nil, minimumAttemptGap: Duration = .seconds(2),
            silenceBeforeReplacing: Duration = .seconds(30)
        ) {
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
            self.assumedHeartbeat = assumedHeartbeat
            self.openTimeout = openTimeout
            self.attemptsBeforeFirstConnection = attemptsBeforeFirstConnection
            self.minimumAttemptGap = minimumAttemptGap
            self.silenceBeforeReplacing = silenceBeforeReplacing
        }
    }

    /// Why a connection ended, or could not be opened.
    public enum Ending: Sendable, Equatable {
        /// The socket closed; the close code and reason the broker sent, if any (`nil`: no close frame).
        case closed(code: Int?, reason: String?)
        /// The upgrade was answered with this HTTP status (401 token refused, 404 no endpoint, 429, 503...).
        case refused(status: Int, message: String)
        /// The broker could not be reached (connection refused, timeout, TLS, DNS...).
        case unreachable(String)
        /// Nothing arrived in time: no `welcome` after the upgrade, or the keepalive went unanswered.
        case dead(String)
    }

    /// What an ending calls for.
    public enum Verdict: Sendable, Equatable {
        /// Wait the backoff delay and connect again.
        case retry
        /// Ask the token provider for a fresh token and connect again at once.
        case renewTokenThenRetry
        /// Give up: trying again cannot help.
        case stop
    }

    /// What the owner must do next.
    public enum Action: Sendable, Equatable {
        /// Open a connection with this keepalive period; `renewToken` asks for a fresh token first.
        case connect(keepalive: Duration, renewToken: Bool)
        /// Wait `delay`, then report ``delayElapsed(now:)``. `attempt` counts failures since the last success.
        case wait(delay: Duration, attempt: Int, reason: String)
        /// Close the open connection: it is taken as dead. Report the ending with ``ended(_:now:)`` afterwards.
        case closeDead(reason: String)
        /// Stop for good.
        case stop(reason: String, ending: Ending)
        /// Nothing to do.
        case none
    }

    /// Where the connection stands.
    public enum Phase: Sendable, Equatable {
        case idle
        case connecting
        /// Open since `since`; `welcomed` once `welcome` arrived.
        case open(since: ContinuousClock.Instant, welcomed: Bool)
        case waiting(until: ContinuousClock.Instant)
        case stopped
    }

    public let policy: Policy
    public private(set) var phase: Phase = .idle
    /// The heartbeat the last `welcome` announced, if any.
    public private(set) var heartbeat: Duration?
    /// Failed attempts since the last connection that got its `welcome`.
    public private(set) var failures = 0
    /// Whether a connection ever got its `welcome`.
    public private(set) var everConnected = false
    /// How many times in a row the token was renewed without a connection getting through.
    private var renewalsWithoutSuccess = 0
    /// When the last attempt started, as reported by ``attempting(now:)``.
    public private(set) var lastAttempt: ContinuousClock.Instant?
    private var random: any RandomNumberGenerator & Sendable

    /// - Parameter random: the source of the jitter; tests pass a fixed one.
    public init(policy: Policy = Policy(), random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()) {
        self.policy = policy
        self.random = random
    }

    /// The ping period for the next connection: the announced heartbeat, or the policy's assumption before any.
    public var keepalive: Duration { heartbeat ?? policy.assumedHeartbeat }

    /// The silence after which an open connection is taken as dead: two keepalive periods.
    public var deadAfter: Duration { keepalive * 2 }

    /// When an open connection that has not had its `welcome` must be given up, if it is in that phase.
    public var openDeadline: ContinuousClock.Instant? {
        guard case .open(let since, false) = phase else { return nil }
        return since + policy.openTimeout
    }

    /// The next moment the machine has something to decide by itself, if any: the end of a backoff wait
    /// (``delayElapsed()``), or the `welcome` deadline of an open connection that has not had it (``tick(now:)``).
    /// `nil` while connecting, connected and welcomed, idle or stopped: nothing is due then, and the owner sleeps
    /// until an event (a frame, the socket's end, the app's word) instead of waking to look. A dead path on a
    /// welcomed connection is the keepalive's job (``keepalive``), which closes the socket.
    public var nextDeadline: ContinuousClock.Instant? {
        switch phase {
        case .waiting(let until): until
        case .open(let since, false): since + policy.openTimeout
        case .idle, .connecting, .open, .stopped: nil
        }
    }

    // MARK: Events

    /// Starts: the first connection, with the token as the provider gives it.
    public mutating func start() -> Action {
        guard phase == .idle else { return .none }
        phase = .connecting
        return .connect(keepalive: keepalive, renewToken: false)
    }

    /// The socket opened (the upgrade succeeded) at `now`.
    public mutating func opened(now: ContinuousClock.Instant) {
        guard phase == .connecting else { return }
        phase = .open(since: now, welcomed: false)
    }

    /// `welcome` arrived: the connection counts as a success and resets the backoff.
    public mutating func welcomed(heartbeatSeconds: Int) {
        guard case .open(let since, _) = phase else { return }
        if heartbeatSeconds > 0 { heartbeat = .seconds(heartbeatSeconds) }
        phase = .open(since: since, welcomed: true)
        failures = 0
        renewalsWithoutSuccess = 0
        everConnected = true
    }

    /// Time passed: gives up a connection whose `welcome` is late.
    public mutating func tick(now: ContinuousClock.Instant) -> Action {
        if let deadline = openDeadline, now >= deadline {
            return .closeDead(reason: "no welcome within \(Self.words(policy.openTimeout)) of opening")
        }
        return .none
    }

    /// The connection ended, or could not be opened, at `now`.
    public mutating func ended(_ ending: Ending, now: ContinuousClock.Instant) -> Action {
        guard phase != .stopped, phase != .idle else { return .none }
        let reason = Self.describe(ending)
        var verdict = Self.verdict(for: ending)
        if verdict == .renewTokenThenRetry {
            // A fresh token that is refused again will not get better by asking once more.
            renewalsWithoutSuccess += 1
            if renewalsWithoutSuccess > 1 { verdict = Self.isRefusedToken(ending) ? .stop : .retry }
        }
        switch verdict {
        case .stop:
            phase = .stopped
            return .stop(reason: reason, ending: ending)
        case .renewTokenThenRetry:
            phase = .connecting
            return .connect(keepalive: keepalive, renewToken: true)
        case .retry:
            failures += 1
            if !everConnected, let limit = policy.attemptsBeforeFirstConnection, failures >= limit {
                phase = .stopped
                return .stop(reason: reason, ending: ending)
            }
            let delay = delay(attempt: failures, minimum: Self.minimumDelay(for: ending))
            phase = .waiting(until: now + delay)
            return .wait(delay: delay, attempt: failures, reason: reason)
        }
    }

    /// The wait is over: connect again. The token is kept: the owner renews it when it is missing or near its
    /// expiry, and the machine asks for a fresh one after a refusal (4001, HTTP 401).
    public mutating func delayElapsed() -> Action {
        guard case .waiting = phase else { return .none }
        phase = .connecting
        return .connect(keepalive: keepalive, renewToken: false)
    }

    /// An attempt to connect starts at `now` (for the gap between attempts asked for by ``connectivityReturned(now:)``).
    public mutating func attempting(now: ContinuousClock.Instant) {
        lastAttempt = now
    }

    /// The network came back, the app came to the foreground, or the app asked to reconnect: while waiting, the
    /// backoff starts over and an attempt follows at once, or as soon as ``Policy/minimumAttemptGap`` has passed
    /// since the last one.
    public mutating func connectivityReturned(now: ContinuousClock.Instant) -> Action {
        guard case .waiting = phase else { return .none }
        failures = 0
        if let lastAttempt, now < lastAttempt + policy.minimumAttemptGap {
            let delay = lastAttempt + policy.minimumAttemptGap - now
            phase = .waiting(until: now + delay)
            return .wait(delay: delay, attempt: 1, reason: "the network came back")
        }
        phase = .connecting
        return .connect(keepalive: keepalive, renewToken: false)
    }

    /// The owner stops (the app is done): nothing more will be asked.
    public mutating func stop() {
        phase = .stopped
    }

    // MARK: Rules

    /// The full-jitter delay before retry `attempt` (1 for the first): uniform in [0, min(cap, initial × 2^(attempt-1))],
    /// but at least `minimum`.
    public mutating func delay(attempt: Int, minimum: Duration = .zero) -> Duration {
        let ceiling = Self.ceiling(attempt: attempt, initial: policy.initialDelay, maximum: policy.maximumDelay)
        let fraction = Double(random.next() >> 11) / Double(1 << 53)
        let drawn = ceiling * fraction
        return min(max(drawn, minimum), max(policy.maximumDelay, minimum))
    }

    /// The upper bound of the jitter for `attempt`: `initial` doubling per attempt, capped at `maximum`.
    public static func ceiling(attempt: Int, initial: Duration, maximum: Duration) -> Duration {
        var ceiling = initial
        var remaining = max(attempt, 1) - 1
        while remaining > 0, ceiling < maximum {
            ceiling = ceiling * 2
            remaining -= 1
        }
        return min(ceiling, maximum)
    }

    /// Which endings are worth another try.
    ///
    /// | Ending | Verdict |
    /// |---|---|
    /// | 4001 (token expired), HTTP 401 on the upgrade | new token then retry (stop if the fresh token is refused too) |
    /// | 1002, 1003, 1007, 1009, 1010 (this client broke the protocol) | stop: the same client would do it again |
    /// | HTTP 404 (no broker endpoint at that address), 400 | stop |
    /// | 1000, 1001 (shutdown, ping timeout), 1006/none, 1011-1014, 4008, 4009, 4029, other codes; HTTP 429, 503, other; unreachable; dead | retry |
    public static func verdict(for ending: Ending) -> Verdict {
        switch ending {
        case .closed(let code?, _) where code == Int(CloseCode.tokenExpired):
            return .renewTokenThenRetry
        case .closed(let code?, _) where [1002, 1003, 1007, 1009, 1010].contains(code):
            return .stop
        case .closed, .unreachable, .dead:
            return .retry
        case .refused(let status, _):
            switch status {
            case 401: return .renewTokenThenRetry
            case 400, 404: return .stop
            default: return .retry
            }
        }
    }

    /// Some endings ask for patience beyond the backoff: too many connections (another device holds them) and
    /// too many refused frames (the budget refills at 10 a minute) are not cured by hurrying back.
    static func minimumDelay(for ending: Ending) -> Duration {
        switch ending {
        case .closed(let code?, _) where code == Int(CloseCode.tooManyConnections) || code == Int(CloseCode.tooManyErrors):
            return .milliseconds(DonorViewRules.backoffPatienceMilliseconds)
        case .refused(429, _):
            return .milliseconds(DonorViewRules.backoffPatienceMilliseconds)
        default:
            return .zero
        }
    }

    private static func isRefusedToken(_ ending: Ending) -> Bool {
        if case .refused(401, _) = ending { return true }
        return false
    }

    /// A short reason for an ending, for logs and screens.
    public static func describe(_ ending: Ending) -> String {
        switch ending {
        case .closed(let code, let reason):
            let reason = reason.flatMap { $0.isEmpty ? nil : $0 }
            switch code {
            case 4001?: return "the token expired (4001)"
            case 4008?: return "the connection fell behind (4008)"
            case 4009?: return "too many refused frames (4009)"
            case 4029?: return "too many connections for this identity (4029)"
            case 1001?: return "\(reason ?? "the broker went away") (1001)"
            case let code?: return reason.map { "\($0) (\(code))" } ?? "closed with code \(code)"
            case nil: return reason ?? "the connection dropped"
            }
        case .refused(let status, let message):
            return "the broker refused the connection (HTTP \(status)): \(message)"
        case .unreachable(let why):
            return "cannot reach the broker: \(why)"
        case .dead(let why):
            return "the connection is dead: \(why)"
        }
    }

    static func words(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}
