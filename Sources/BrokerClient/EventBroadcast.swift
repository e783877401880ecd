import DequeModule
import NIOConcurrencyHelpers

/// Hands every event to every consumer: each call to ``subscribe()`` gets a stream of its own, bounded to
/// ``limit`` events (the oldest unread are dropped beyond). A consumer that stops (a SwiftUI `.task` cancelled)
/// leaves the others and the connection alone.
///
/// Events that come before the first consumer are kept (up to ``limit``) and given to it, so a consumer that
/// starts iterating just after `run()` misses nothing.
final class EventBroadcast<Element: Sendable>: Sendable {
    private struct State {
        var consumers: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var nextID: UInt64 = 0
        /// Events kept until the first consumer comes.
        var early = Deque<Element>()
        var everSubscribed = false
        var finished = false
    }

    let limit: Int
    private let state = NIOLockedValueBox(State())

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// A new consumer's stream: from now on (or, for the first consumer, from the start), until ``finish()``.
    func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(limit))
        let id = state.withLockedValue { state -> UInt64? in
            if !state.everSubscribed {
                state.everSubscribed = true
                for event in state.early { continuation.yield(event) }
                state.early.removeAll()
            }
            if state.finished { return nil }
            state.nextID += 1
            state.consumers[state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLockedValue { $0.consumers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Gives `event` to every consumer. Under the lock, so events reach every consumer in one order, whichever
    /// task yields them (a stream's yield never waits).
    func yield(_ event: Element) {
        state.withLockedValue { state in
            guard !state.finished else { return }
            if !state.everSubscribed {
                state.early.append(event)
                if state.early.count > limit { state.early.removeFirst() }
            }
            for consumer in state.consumers.values { consumer.yield(event) }
        }
    }

    /// Ends every stream; later consumers get an empty one (the first still gets what came before it).
    func finish() {
        let consumers = state.withLockedValue { state -> [AsyncStream<Element>.Continuation] in
            state.finished = true
            return Array(state.consumers.values)
        }
        for consumer in consumers { consumer.finish() }
    }
}
