import BrokerClient
import BrokerProtocol
import Foundation
import Logging
import WatchRendering

/// Connects, subscribes, feeds frames to the ``WatchState`` and the display, and reconnects with backoff.
///
/// Runs in one task and owns its state; nothing is shared but the connection, which is `Sendable`.
final class WatchSession {
    /// How the watching of one connection ended.
    private enum Outcome {
        case ended(WatchEnd)
        case lost(String)
    }

    /// How long to wait for the answer to `subscribe` before taking the connection as dead.
    static let subscribeTimeoutMilliseconds: Int64 = 10_000
    /// How often to ask again while a resubscribe is answered `not-trackable` (the trip is paused).
    static let notTrackableRetryMilliseconds: Int64 = 15_000
    /// How long to wait for a frame before letting time pass on the screen.
    static let tickInterval: Duration = .milliseconds(250)

    private let url: String
    private let token: String
    private let target: ClientFrame.Target
    private let display: any WatchDisplay
    private let logger: Logger
    private let backoff = Backoff()
    private var state: WatchState
    /// Whether a subscription was ever granted: before that, any refusal or failure is final.
    private var subscribedOnce = false
    /// Failed attempts since the last granted subscription, for the backoff.
    private var failures = 0
    private var requestCount = 0

    init(url: String, token: String, target: ClientFrame.Target, display: any WatchDisplay, logger: Logger) {
        self.url = url
        self.token = token
        self.target = target
        self.display = display
        self.logger = logger
        state = WatchState(request: target)
    }

    /// Watches until the tracking ends or cannot go on, and returns why.
    func run() async -> WatchEnd {
        display.start()
        while true {
            apply(.connecting)
            let connection: BrokerConnection
            do {
                connection = try await BrokerConnection.connect(url: url, token: token, logger: logger)
            } catch {
                let failure = await ConnectFailure.diagnose(error, url: url, token: token)
                logger.warning("could not connect", metadata: ["reason": "\(failure.reason)"])
                if failure.isFinal || !subscribedOnce { return finish(failure.end) }
                await waitBeforeRetry(reason: failure.reason)
                continue
            }
            let outcome = await watch(connection)
            await connection.close()
            switch outcome {
            case .ended(let end):
                return finish(end)
            case .lost(let reason):
                logger.warning("connection lost", metadata: ["reason": "\(reason)"])
                apply(.lost(reason: reason))
                await waitBeforeRetry(reason: reason)
            }
        }
    }

    // MARK: One connection

    private func watch(_ connection: BrokerConnection) async -> Outcome {
        if subscribedOnce { apply(.resubscribing(since: state.highestSeq)) }
        var pending: String?
        do {
            pending = try await subscribe(connection)
        } catch {
            return .lost("could not send subscribe: \(error)")
        }
        var sentAt = Self.now()
        var resubscribeAt: Int64?
        while true {
            if let at = resubscribeAt, Self.now() >= at {
                resubscribeAt = nil
                do {
                    pending = try await subscribe(connection)
                } catch {
                    return .lost("could not send subscribe: \(error)")
                }
                sentAt = Self.now()
            }
            let event = await connection.nextEvent(timeout: Self.tickInterval)
            let now = Self.now()
            guard let event else {
                if pending != nil, now - sentAt > Self.subscribeTimeoutMilliseconds {
                    return .lost("no answer to subscribe within \(Self.subscribeTimeoutMilliseconds / 1000) s")
                }
                tick(now: now)
                continue
            }
            switch event {
            case .closed(let code, let reason):
                return .lost(Self.describeClose(code: code, reason: reason))
            case .undecodable(let text):
                // A newer broker may send frames this watcher does not know: skip them.
                logger.debug("skipped an unknown frame", metadata: ["text": "\(text.prefix(200))"])
            case .frame(.error(let error), _) where error.re != nil && error.re == pending:
                pending = nil
                if !subscribedOnce { return .ended(.refused(error.code, message: error.message)) }
                switch error.code {
                case .notTrackable:
                    let at = now + Self.notTrackableRetryMilliseconds
                    apply(.notTrackable(message: error.message, retryAt: at))
                    resubscribeAt = at
                case .unavailable, .internal, .rateLimited:
                    return .lost("the broker could not subscribe now (\(error.code.rawValue)): \(error.message)")
                default:
                    return .ended(.refusedAfterReconnect(error.code, message: error.message))
                }
            case .frame(let frame, _):
                if case .subscribed(let subscribed) = frame, subscribed.re == pending {
                    pending = nil
                    subscribedOnce = true
                    failures = 0
                }
                // Apply first: an argument list would read `state` before `apply` changes it.
                let update = state.apply(frame, now: now)
                display.show(state, update: update, now: now)
                if let end = state.ended { return .ended(end) }
            }
        }
    }

    /// Sends `subscribe`, with `since` once positions were seen, and returns its request id.
    private func subscribe(_ connection: BrokerConnection) async throws -> String {
        requestCount += 1
        let id = "s\(requestCount)"
        try await connection.send(.subscribe(.init(id: id, target: target, since: state.highestSeq)))
        return id
    }

    // MARK: Helpers

    /// Waits the backoff delay before the next attempt, keeping the screen ticking.
    private func waitBeforeRetry(reason: String) async {
        failures += 1
        let delay = backoff.delay(attempt: failures, random: Double.random(in: 0..<1))
        let at = Self.now() + Int64(delay * 1000)
        apply(.retrying(attempt: failures, at: at, reason: reason))
        while Self.now() < at {
            try? await Task.sleep(for: .milliseconds(min(250, max(1, at - Self.now()))))
            tick(now: Self.now())
        }
    }

    private func apply(_ event: LinkEvent) {
        let now = Self.now()
        let update = state.apply(event, now: now)
        display.show(state, update: update, now: now)
    }

    private func tick(now: Int64) {
        let update = state.tick(now: now)
        if update.isEmpty {
            display.tick(state, now: now)
        } else {
            display.show(state, update: update, now: now)
        }
    }

    private func finish(_ end: WatchEnd) -> WatchEnd {
        let now = Self.now()
        if state.ended == nil {
            let update = state.apply(.ended(end), now: now)
            display.show(state, update: update, now: now)
        }
        display.finish(state, now: now)
        return state.ended ?? end
    }

    /// Words for a close code and reason, as the broker uses them.
    static func describeClose(code: Int?, reason: String?) -> String {
        let reason = reason.flatMap { $0.isEmpty ? nil : $0 }
        switch code {
        case 4001?: return "the token expired (4001)"
        case 4008?: return "the connection fell behind (4008)"
        case 1001?: return "\(reason ?? "the broker went away") (1001)"
        case let code?: return reason.map { "\($0) (\(code))" } ?? "closed with code \(code)"
        case nil: return reason ?? "the connection dropped"
        }
    }

    /// The wall clock in milliseconds since the Unix epoch.
    static func now() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
