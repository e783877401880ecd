import BrokerCore
import BrokerStorage
import EventDelivery
import Logging
import ServiceLifecycle

/// Delivers the outbox: each event's webhook to the backend and its push to the donor's browsers.
///
/// Every node runs one; the outbox leases each delivery to one node at a time, so in a cluster each event is
/// sent by one node (again by another only if that one stops before it is done, when its lease runs out).
/// One donation's events go one at a time, oldest first; different donations' go in parallel, each attempt on its
/// own, so a receiver that hangs on one holds up no other. A failed webhook is tried again after an
/// exponential backoff with full jitter, until the delivery is older than the give-up time; then it is kept
/// as failed for an operator to look at and send again (`/v1/events/failed`, `/v1/events/retry`). A push goes to each
/// browser on its own (``PushFanOut``): one browser's failures never hold up or repeat another's pushes.
struct EventDispatcher: Service {
    let outbox: any EventOutbox
    let webhooks: (any WebhookSending)?
    let pushes: (any PushSending)?
    let node: String
    /// The browsers waiting for a push to be tried again, each on its own (``PushFanOut``).
    let pushRetries = PushRetries()
    /// The waits between one browser's push attempts; each push's window bounds them (``PushFanOut``).
    var pushRetryWaits = RetrySchedule(baseMilliseconds: 2_000, capMilliseconds: 30_000, giveUpAfterMilliseconds: 0)
    /// When a failed delivery is tried again: a wait drawn below min(1 h, 5 s * 2^(attempt - 1)); given up a day
    /// after its event (`webhook_retry_hours`).
    var retry = RetrySchedule(baseMilliseconds: 5_000, capMilliseconds: 3_600_000, giveUpAfterMilliseconds: 24 * 3_600_000)
    /// How long a claimed delivery stays this node's: longer than one attempt may take.
    let lease: Duration
    let clock: WallClock
    let metrics: EventMetrics
    let logger: Logger
    let doorbell: Doorbell
    /// Failed attempts, at warning, rate-limited.
    let failures: DeliveryFailureLog
    /// How often the outbox is looked at when nothing rang.
    var tick: Duration = .seconds(1)
    /// Deliveries under way at once on this node, per route.
    var batch = 16

    func run() async throws {
        let inFlight = InFlight()
        await cancelWhenGracefulShutdown {
            // Each delivery runs as a task of its own: one that hangs until its timeout holds up its donation's
            // later events only, never another donation's. The loop claims more as soon as one ends.
            await withChildTasks { add, _ in
                var lastStats: Int64?
                var lastPrune: Int64?
                while !Task.isCancelled {
                    var busy = false
                    if webhooks != nil { busy = await startWebhooks(adding: add, inFlight: inFlight) || busy }
                    if pushes != nil { busy = await startPushes(adding: add, inFlight: inFlight) || busy }
                    let now = clock.now()
                    if lastStats.map({ now - $0 >= 5_000 }) ?? true {
                        lastStats = now
                        await updateGauges(now: now)
                    }
                    if lastPrune.map({ now - $0 >= 3_600_000 }) ?? true {
                        lastPrune = now
                        // Delivered events are kept a week, for an operator asking what the backend was told.
                        _ = try? await outbox.prune(deliveredBefore: now - 7 * 86_400_000)
                    }
                    if !busy { await doorbell.wait(limit: tick) }
                }
            }
        }
    }

    /// Deliveries under way on this node, per route: at most `batch` each.
    private final class InFlight: Sendable {
        private let counts = LockedValue([OutboxRoute: Int]())

        func free(_ route: OutboxRoute, of batch: Int) -> Int { counts.withLock { batch - $0[route, default: 0] } }
        func started(_ route: OutboxRoute, _ count: Int) { counts.withLock { $0[route, default: 0] += count } }
        func ended(_ route: OutboxRoute) { counts.withLock { $0[route, default: 0] -= 1 } }
    }

    /// Claims the due webhooks this node has room for and starts sending each. - Returns: whether there was any.
    private func startWebhooks(adding add: AddChildTask, inFlight: InFlight) async -> Bool {
        guard let webhooks else { return false }
        let claimed = await claim(.webhook, limit: inFlight.free(.webhook, of: batch))
        inFlight.started(.webhook, claimed.count)
        for delivery in claimed {
            add {
                let verdict = await webhooks.send(delivery.event, now: clock.now())
                await settle(delivery, route: .webhook, verdict: verdict)
                inFlight.ended(.webhook)
                // The donation's next event may be due now.
                doorbell.ring()
            }
        }
        return !claimed.isEmpty
    }

    /// Claims the due pushes this node has room for and starts sending each to every subscription of its donation.
    /// - Returns: whether there was any.
    private func startPushes(adding add: AddChildTask, inFlight: InFlight) async -> Bool {
        guard let pushes else { return false }
        let fanOut = PushFanOut(
            outbox: outbox, pushes: pushes, retries: pushRetries, schedule: pushRetryWaits, clock: clock, metrics: metrics, failures: failures, logger: logger)
        let claimed = await claim(.push, limit: inFlight.free(.push, of: batch))
        inFlight.started(.push, claimed.count)
        for delivery in claimed {
            add {
                await withChildTasks { startRetry, _ in
                    await push(delivery, with: fanOut, retrying: startRetry, now: clock.now())
                    inFlight.ended(.push)
                    doorbell.ring()
                }
            }
        }
        return !claimed.isEmpty
    }

    private func claim(_ route: OutboxRoute, limit: Int) async -> [ClaimedEvent] {
        guard limit > 0 else { return [] }
        do {
            return try await outbox.claim(route, node: node, now: clock.now(), lease: lease.milliseconds, limit: limit)
        } catch {
            logger.warning("the event outbox cannot be read; deliveries wait", metadata: ["route": "\(route.rawValue)", "error": "\(error)"])
            return []
        }
    }

    /// Sends a push's first round to every browser of its donation (``PushFanOut``), then marks it done so the
    /// donation's next push is not held; a browser that did not take it is retried on its own, in a task `startRetry` starts.
    private func push(_ delivery: ClaimedEvent, with pushes: PushFanOut, retrying startRetry: AddChildTask, now: Int64) async {
        let event = delivery.event
        guard let message = event.push else {
            await settle(delivery, route: .push, verdict: .delivered)
            return
        }
        let window = PushFanOut.retryWindowMilliseconds(message)
        // A push claimed after its window (the broker was down, the outbox could not be read) says something no longer
        // true ("4 minutes away"): it is not sent.
        guard now < event.occurredAt + window else {
            metrics.attempt(.push, "failed")
            await markDelivered(delivery, route: .push)
            await endTracking(event, pushes: pushes)
            return
        }
        let subscriptions: [PushSubscriptionRecord]
        do {
            subscriptions = try await outbox.subscriptions(donation: event.donation, incarnation: event.incarnation)
        } catch {
            metrics.attempt(.push, "retry")
            await reschedule(delivery, route: .push, error: "the subscriptions could not be read: \(error)", now: now)
            return
        }
        let round = await pushes.firstRound(event, message, to: subscriptions, now: now)
        await markDelivered(delivery, route: .push)
        await endTracking(event, pushes: pushes)
        for key in round.loops {
            startRetry { await pushes.retryLoop(key) }
        }
    }

    /// Nothing is pushed after the end: the donation's subscriptions go with its last push's first round.
    private func endTracking(_ event: OutboxEvent, pushes: PushFanOut) async {
        guard event.type == PushFanOut.endType else { return }
        try? await outbox.removeSubscriptions(donation: event.donation)
    }

    private func settle(_ delivery: ClaimedEvent, route: OutboxRoute, verdict: AttemptVerdict) async {
        let now = clock.now()
        switch verdict {
        case .delivered:
            if route == .webhook { metrics.attempt(route, "sent") }
            await markDelivered(delivery, route: route)
        case .retry(let why), .gone(let why), .drop(let why):
            if retry.givesUp(firstAttemptAt: delivery.event.occurredAt, now: now) {
                metrics.attempt(route, "failed")
                logger.error(
                    "an event was not delivered in time and is kept as failed",
                    metadata: ["event": "\(delivery.event.id)", "type": "\(delivery.event.type)", "route": "\(route.rawValue)", "why": "\(why)"])
                try? await outbox.failed(delivery.event.id, route: route, node: node, attempts: delivery.attempts + 1, error: why)
            } else {
                metrics.attempt(route, "retry")
                failures.failed(route: route, type: delivery.event.type, reason: why, outcome: "retried")
                await reschedule(delivery, route: route, error: why, now: now)
            }
        }
    }

    private func markDelivered(_ delivery: ClaimedEvent, route: OutboxRoute) async {
        do {
            try await outbox.delivered(delivery.event.id, route: route, node: node, at: clock.now())
        } catch {
            // The lease runs out and the delivery is made again: at least once, as promised.
            logger.warning("a delivery could not be marked done; it will be made again", metadata: ["event": "\(delivery.event.id)", "error": "\(error)"])
        }
    }

    private func reschedule(_ delivery: ClaimedEvent, route: OutboxRoute, error: String, now: Int64) async {
        let attempts = delivery.attempts + 1
        var random = SystemRandomNumberGenerator()
        let wait = retry.delay(afterAttempt: attempts, random: &random)
        try? await outbox.retry(delivery.event.id, route: route, node: node, attempts: attempts, nextAttemptAt: now + wait, error: error)
    }

    private func updateGauges(now: Int64) async {
        for route in [OutboxRoute.webhook, .push] where (route == .webhook ? webhooks != nil : pushes != nil) {
            if let stats = try? await outbox.stats(route: route, now: now) { metrics.update(route, stats) }
        }
    }
}

extension Duration {
    /// Whole milliseconds.
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
