import BrokerCore
import BrokerStorage
import EventDelivery
import Logging

/// Sends one push event to each browser subscription of its donation, each on its own.
///
/// - The first attempt goes to every browser at once; the event is then done as far as the outbox is concerned,
///   so one browser whose push service does not answer never holds up the donation's later pushes.
/// - A browser whose attempt is worth repeating (no connection, a timeout, 408, 429, a 5xx) gets its own retries
///   (``PushRetries``), for at most ``retryWindowMilliseconds(_:)``; a newer push to that browser replaces the one
///   waiting.
/// - Nothing is pushed after a donation's end: the end's push removes the donation's subscriptions, and a retry of an
///   earlier push is sent only while its subscription is still stored. The end's own push is retried to the browsers
///   it went to.
struct PushFanOut: Sendable {
    let outbox: any EventOutbox
    let pushes: any PushSending
    let retries: PushRetries
    /// The waits between one browser's attempts (full jitter); the give-up time is the push's own window.
    let schedule: RetrySchedule
    let clock: WallClock
    let metrics: EventMetrics
    /// Failed attempts, logged at warning at most once a minute.
    let failures: DeliveryFailureLog
    let logger: Logger

    /// The end of a donation's tracking: its push is the donation's last.
    static let endType = "tracking.ended"

    /// How long a push is worth trying: half its TTL (so a late success still says something true for a while), and
    /// at most an hour. An ETA ("approaching", TTL 5 minutes) is tried for 2.5 minutes.
    static func retryWindowMilliseconds(_ message: PushMessage) -> Int64 {
        min(Int64(message.ttlSeconds) * 500, 3_600_000)
    }

    /// What the first round left to do.
    struct FirstRound {
        /// Browsers to try again, each with its own loop to start.
        var loops: [PushRetries.Key] = []
    }

    /// Makes the first attempt at `event` for each of `subscriptions`, at once.
    func firstRound(_ event: OutboxEvent, _ message: PushMessage, to subscriptions: [PushSubscriptionRecord], now: Int64) async -> FirstRound {
        let verdicts = await withTaskGroup(of: (PushSubscriptionRecord, AttemptVerdict).self) { group in
            for subscription in subscriptions {
                group.addTask { (subscription, await pushes.send(event, message: message, to: subscription, now: now)) }
            }
            var verdicts: [(PushSubscriptionRecord, AttemptVerdict)] = []
            for await verdict in group { verdicts.append(verdict) }
            return verdicts
        }
        var round = FirstRound()
        let giveUpAt = event.occurredAt + Self.retryWindowMilliseconds(message)
        for (subscription, verdict) in verdicts {
            let key = PushRetries.Key(endpoint: subscription.endpoint, donation: event.donation)
            if case .retry(let why) = verdict, now < giveUpAt {
                metrics.attempt(.push, "retry")
                failures.failed(route: .push, type: event.type, reason: why, outcome: "retried")
                if retries.wait(key, .init(event: event, message: message, subscription: subscription, giveUpAt: giveUpAt)) {
                    round.loops.append(key)
                }
                continue
            }
            retries.settled(key, by: event)
            await settle(verdict, event: event, subscription: subscription)
        }
        return round
    }

    /// Tries one browser again until its push is taken, refused, replaced by nothing newer, or past its window.
    func retryLoop(_ key: PushRetries.Key) async {
        var attempt = 1
        var lastEvent: String?
        var random = SystemRandomNumberGenerator()
        while let waiting = retries.next(key) {
            if waiting.event.id != lastEvent {
                attempt = 1
                lastEvent = waiting.event.id
            }
            let now = clock.now()
            let wait = min(schedule.delay(afterAttempt: attempt, random: &random), max(0, waiting.giveUpAt - now))
            do {
                try await Task.sleep(for: .milliseconds(wait))
            } catch {
                return  // the broker stops: retries live in memory only
            }
            guard let pending = retries.next(key) else { return }
            guard pending.event.id == waiting.event.id else { continue }  // replaced while asleep
            let attemptAt = clock.now()
            guard attemptAt < pending.giveUpAt else {
                metrics.attempt(.push, "failed")
                retries.done(key, event: pending.event.id)
                continue
            }
            guard await mayStillPush(pending) else {
                metrics.attempt(.push, "dropped")
                retries.done(key, event: pending.event.id)
                continue
            }
            let verdict = await pushes.send(pending.event, message: pending.message, to: pending.subscription, now: attemptAt)
            if case .retry(let why) = verdict {
                metrics.attempt(.push, "retry")
                failures.failed(route: .push, type: pending.event.type, reason: why, outcome: "retried")
                attempt += 1
                continue
            }
            retries.done(key, event: pending.event.id)
            await settle(verdict, event: pending.event, subscription: pending.subscription)
        }
    }

    /// Whether a retry of `pending` may still go: the end's push may (its subscriptions went with it), any other only
    /// while its subscription is stored, that is while its donation has not ended nor the browser unsubscribed.
    private func mayStillPush(_ pending: PushRetries.Pending) async -> Bool {
        if pending.event.type == Self.endType { return true }
        do {
            let stored = try await outbox.subscriptions(donation: pending.event.donation, incarnation: pending.event.incarnation)
            return stored.contains { $0.endpoint == pending.subscription.endpoint }
        } catch {
            // Not knowing whether the donation ended, nothing is sent; the next attempt asks again.
            return false
        }
    }

    private func settle(_ verdict: AttemptVerdict, event: OutboxEvent, subscription: PushSubscriptionRecord) async {
        switch verdict {
        case .delivered:
            metrics.attempt(.push, "sent")
        case .gone(let why):
            metrics.attempt(.push, "gone")
            logger.info("a push subscription is gone; deleted", metadata: ["donation": "\(event.donation)", "why": "\(why)"])
            try? await outbox.removeSubscription(endpoint: subscription.endpoint)
        case .drop(let why):
            metrics.attempt(.push, "failed")
            failures.failed(route: .push, type: event.type, reason: why, outcome: "dropped")
        case .retry(let why):
            metrics.attempt(.push, "failed")
            failures.failed(route: .push, type: event.type, reason: why, outcome: "given up past its window")
        }
    }
}
