import BrokerCore
import BrokerStorage
import Logging
import ServiceLifecycle

/// Stores the events the hub recorded in the outbox, and wakes the dispatcher.
///
/// A store that cannot take them now is tried again with backoff, the events held meanwhile; at shutdown what is
/// held gets one last try. In a cluster, a silence is checked against the store before it is kept: a node that
/// does not hear the volunteer's channel may take a volunteer heard by another node for silent.
struct EventWriter: Service {
    let recorder: EventRecorder
    let outbox: any EventOutbox
    /// This node's name, part of the id of the events it alone decides (silences and their ends).
    let node: String
    /// Whether webhooks are sent: only then does an event wait for one.
    let webhooks: Bool
    /// Whether pushes are sent: only then does an event carry its push.
    let pushes: Bool
    /// In a cluster: whether any node kept a fix of `channel` after `since` (milliseconds).
    let heardSince: (@Sendable (_ channel: String, _ since: Int64) async throws -> Bool)?
    let silentAfterMilliseconds: Int64
    let metrics: EventMetrics
    let logger: Logger
    /// Called after events were stored: the dispatcher looks at once instead of at its next tick.
    let onStored: @Sendable () -> Void

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let events = await recorder.next()
                guard !events.isEmpty else { break }
                await write(events, patiently: true)
            }
        }
        let left = await recorder.nextIfAny()
        if !left.isEmpty { await write(left, patiently: false) }
    }

    /// Stores `events`; `patiently` retries until it succeeds or the service stops.
    func write(_ events: [TrackingEvent], patiently: Bool) async {
        var rows: [OutboxEvent] = []
        for event in events {
            if case .silent = event.kind, let heardSince, let channel = event.channel {
                let heard = try? await heardSince(channel, event.at - silentAfterMilliseconds)
                // Unknown counts as silent: an extra `silent` answered by `back` beats a silence never told.
                if heard == true { continue }
            }
            rows.append(EventMessage.outboxEvent(event, node: node, webhooks: webhooks, pushes: pushes))
        }
        var delay = Duration.milliseconds(250)
        while true {
            do {
                try await outbox.append(rows)
                for row in rows { metrics.stored[row.type]?.increment() }
                recorder.noteWritten(events.count)
                if !rows.isEmpty { onStored() }
                return
            } catch {
                logger.warning("trip events could not be stored; retrying", metadata: ["events": "\(rows.count)", "error": "\(error)"])
                guard patiently, !Task.isCancelled else { break }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(10))
                if Task.isCancelled { break }
            }
        }
        metrics.dropped.increment(by: Int64(rows.count))
        recorder.noteWritten(events.count)
    }
}
