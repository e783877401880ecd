import BrokerCore
import NIOCore

/// The open connections that stayed HTTP, asked to finish (`ChannelShouldQuiesceEvent`: Hummingbird's HTTP/1.1
/// handling closes a connection once the response it is writing is done, an idle one at once) when the broker
/// stops.
///
/// Only HTTP connections are kept here: a WebSocket is closed by the drain (`ConnectionDrainService`) before the
/// listener stops, and keeping every accepted socket in a set, as NIO's `ServerQuiescingHelper` does, would add
/// work to every connect that shows in a connect storm's time.
final class QuiescingHTTPConnections: Sendable {
    private struct State {
        var open: [ObjectIdentifier: any Channel] = [:]
        var isQuiescing = false
    }

    private let state = LockedValue(State())

    init() {}

    /// Keeps `channel` until it closes; one added after ``quiesce()`` is asked to finish at once.
    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let isQuiescing = state.withLock { state in
            if !state.isQuiescing { state.open[id] = channel }
            return state.isQuiescing
        }
        if isQuiescing { return Self.askToFinish(channel) }
        channel.closeFuture.whenComplete { [self] _ in
            _ = state.withLock { $0.open.removeValue(forKey: id) }
        }
    }

    /// Asks every connection kept, and every one added from now on, to finish.
    func quiesce() {
        let open = state.withLock { state in
            state.isQuiescing = true
            return Array(state.open.values)
        }
        for channel in open { Self.askToFinish(channel) }
    }

    private static func askToFinish(_ channel: any Channel) {
        channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
    }
}
