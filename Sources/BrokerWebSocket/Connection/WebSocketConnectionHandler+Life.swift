import BrokerCore
import Logging
import NIOCore

/// The close and heartbeat life of a connection, as ``WebSocketConnectionStateMachine`` decides it: the actions it
/// returns performed, the heartbeat and close-grace timers, and the connection's end.
extension WebSocketConnectionHandler {
    /// A close queued from another thread (the hub's, a publisher's 4008) is reported to this loop a little
    /// later; the outbox knows at once, so it is told to the state machine before a message is acted on.
    func noteQueuedClose(_ outbox: Outbox) {
        if outbox.isClosing { perform(life.brokerCloseQueued()) }
    }

    /// The outbox queued a close (from any thread; told here on the event loop): the close grace starts.
    func outboxCloseQueued() {
        context?.eventLoop.assertInEventLoop()
        perform(life.brokerCloseQueued())
    }

    /// The broker gave up on the socket (the end of the shutdown grace): it is cut at once.
    func outboxAborted() {
        context?.eventLoop.assertInEventLoop()
        perform(.abort)
    }

    /// The connection's logger, or the one given for it before it opened.
    var logger: Logger {
        switch phase {
        case .opening(let opening): opening.logger
        case .serving(let connection, _), .ended(let connection): connection.logger
        }
    }

    func perform(_ action: WebSocketConnectionStateMachine.CloseAction) {
        guard let context else { return }
        switch action {
        case .startGrace(let grace):
            // Closing: no more heartbeats (the state machine would answer them with `.stop`).
            guard let drains = writer?.loopDrains else { return }
            drains.heartbeats.value.remove(self)
            drains.closeGraces.value.insert(self, in: grace)
        case .closeTCP:
            context.close(promise: nil)
        case .abort:
            // A client that does not read cannot receive a close frame: the socket is cut.
            logger.debug("cutting a websocket whose close handshake did not finish in time")
            context.close(promise: nil)
        case .none:
            break
        }
    }

    /// A heartbeat or a close grace of this connection is due (``ConnectionTimers``).
    package func timerExpired(_ timers: ConnectionTimers<WebSocketConnectionHandler>) {
        timers.eventLoop.assertInEventLoop()
        guard let drains = writer?.loopDrains else { return }
        if timers === drains.heartbeats.value {
            heartbeatDue()
        } else {
            perform(life.closeGraceExpired())
        }
    }

    func scheduleHeartbeat() {
        guard context != nil else { return }
        // The period the welcome frame announces, so the two cannot disagree.
        writer?.loopDrains.heartbeats.value.insert(self, in: .seconds(Int64(messages.heartbeatSeconds)))
    }

    func heartbeatDue() {
        guard case .serving(let connection, let outbox) = phase else { return }
        noteQueuedClose(outbox)
        switch life.heartbeatDue(clientWasHeard: takeClientWasHeard(), dataWasWritten: outbox.takeDataWritten()) {
        case .sendPing:
            outbox.pushPing()
            scheduleHeartbeat()
        case .pingWithData:
            outbox.owePing()
            scheduleHeartbeat()
        case .closeForPingTimeout:
            connection.debug("closing a websocket that did not answer a ping")
            let timeout = WebSocketConnectionStateMachine.pingTimeout
            outbox.close(code: timeout.code, reason: timeout.reason, discardPending: true)
            perform(.startGrace(life.grace))
        case .stop:
            break
        }
    }

    /// The heartbeat's ping went to the socket (alone, or after data): the next heartbeat is a heartbeat from now,
    /// and judges the client by what it sends from now on, and whether data flowed by what is written from now on
    /// (the frames the ping went with were heard with it).
    func pingWritten() {
        guard case .serving(_, let outbox) = phase, life.pingWritten() else { return }
        clientWasHeard = false
        _ = outbox.takeDataWritten()
        scheduleHeartbeat()
    }

    /// Whether a frame arrived since the previous call.
    func takeClientWasHeard() -> Bool {
        defer { clientWasHeard = false }
        return clientWasHeard
    }

    /// Forgets the connection once: its subscriptions end and the hub counts it closed.
    func end() {
        if let drains = writer?.loopDrains {
            drains.heartbeats.value.remove(self)
            drains.closeGraces.value.remove(self)
        }
        life.channelInactive()
        context = nil
        guard case .serving(let connection, let outbox) = phase else { return }
        phase = .ended(connection)
        writer = nil
        outbox.finish()
        messages.hub.disconnect(connection)
        connection.debug("websocket closed")
    }
}
