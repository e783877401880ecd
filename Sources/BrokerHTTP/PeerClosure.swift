import NIOConcurrencyHelpers
import NIOCore

/// Tells a request's handler that the client has gone: its socket was closed or reset, or it sent its FIN (a
/// client that half-closes mid-request wants no answer). A handler that holds a request (a long poll) lets go of
/// it at once instead of at the end of its hold.
///
/// First in each HTTP connection's pipeline, so that it sees the end of input before the HTTP handlers, which
/// keep it until the request in flight is answered.
package final class PeerClosure: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    package typealias InboundIn = NIOAny

    private struct State {
        var gone = false
        var onGone: (@Sendable () -> Void)?
    }

    private let state = NIOLockedValueBox(State())

    package init() {}

    /// Calls `action` once, when the client goes (at once if it has gone already); replaces an earlier action
    /// (one request is handled at a time on an HTTP/1.1 connection).
    package func whenGone(_ action: @escaping @Sendable () -> Void) {
        let goneAlready = state.withLockedValue { state -> Bool in
            if state.gone { return true }
            state.onGone = action
            return false
        }
        if goneAlready { action() }
    }

    /// Forgets the action ``whenGone(_:)`` set (the request was answered).
    package func clear() {
        state.withLockedValue { $0.onGone = nil }
    }

    /// Whether the client has gone.
    package var isGone: Bool { state.withLockedValue { $0.gone } }

    private func markGone() {
        let action = state.withLockedValue { state -> (@Sendable () -> Void)? in
            state.gone = true
            defer { state.onGone = nil }
            return state.onGone
        }
        action?()
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { markGone() }
        context.fireUserInboundEventTriggered(event)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        markGone()
        context.fireChannelInactive()
    }

    /// The watcher of `channel`'s pipeline, if it has one.
    package static func of(_ channel: any Channel) async -> PeerClosure? {
        try? await channel.pipeline.handler(type: PeerClosure.self).get()
    }
}
