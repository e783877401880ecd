import BrokerCore
import BrokerProtocol
import NIOCore

/// What the broker does with a client's messages: decode, check, and hand to the hub. Synchronous, called on
/// the connection's event loop; it never waits for anything, least of all for another client's socket.
///
/// One for the whole broker, shared by reference: every connection's handler holds it, and a copy of its fields
/// in each would cost every idle connection some 50 bytes.
package final class ClientMessageHandler: Sendable {
    package let hub: Hub
    let metrics: any WebSocketMetrics
    let clock: WallClock
    let heartbeatSeconds: Int
    /// Refused frames, charged to the identity across all its connections; past its budget the connection is
    /// closed (4009) and the refusal is not answered.
    let refusals: RefusalBudget
    /// The per-event-loop state of the connections: their socket drains and their timers.
    let loopDrains: LoopDrainRegistry

    /// - Parameter invalidFramesPerMinute: the budget of each identity, when `refusals` is not given.
    package init(
        hub: Hub, metrics: any WebSocketMetrics, clock: WallClock, heartbeatSeconds: Int, invalidFramesPerMinute: Int = 10, refusals: RefusalBudget? = nil
    ) {
        self.hub = hub
        self.metrics = metrics
        self.clock = clock
        self.heartbeatSeconds = heartbeatSeconds
        self.refusals = refusals ?? RefusalBudget(perMinute: invalidFramesPerMinute, clock: clock)
        loopDrains = LoopDrainRegistry(metrics: metrics)
    }

    /// Greets a new connection with its identity and the heartbeat.
    func welcome(_ connection: ClientConnection) {
        hub.reply(.welcome(.init(identity: connection.identity, heartbeat: heartbeatSeconds)), to: connection)
    }

    /// Refuses a binary message (the protocol is JSON text) without reading it, and charges it to the identity's
    /// refusal budget; past it the connection is closed with 4009.
    func refuseBinary(from connection: ClientConnection) {
        metrics.frameRead(.invalid)
        refuse(BrokerError(.badRequest, "binary frames are not accepted; send JSON text frames"), re: nil, to: connection)
    }

    /// Handles one complete text message read in place: `text` is valid UTF-8 (the caller checked it; invalid text
    /// closes with 1007), and lives only during the call (nothing is kept of it but the values and strings decoded
    /// from it, which copy). An identity that keeps sending invalid messages past its budget is closed with 4009.
    func handle(text: UnsafeRawBufferPointer, from connection: ClientConnection) {
        _ = handle(text, from: connection)
    }

    /// Charges a frame that breaks a rule without a reply of its own (a ping beyond the ping rate) to the
    /// identity's refusal budget; past it the connection is closed with 4009.
    func chargeInvalidFrame(from connection: ClientConnection, reason: String) {
        metrics.frameRead(.invalid)
        if !refusals.charge(connection.identity) {
            closeForTooManyErrors(connection, reason: reason)
        }
    }

    private func closeForTooManyErrors(_ connection: ClientConnection, reason: String) {
        guard !connection.sink.isClosing else { return }
        connection.logger.notice("closing a connection that keeps sending invalid frames", metadata: ["reason": "\(reason)"])
        connection.sink.close(code: CloseCode.tooManyErrors, reason: reason, discardPending: false)
    }

    /// Handles one text message.
    /// - Returns: the refusal sent back, if the message was refused.
    private func handle(_ bytes: UnsafeRawBufferPointer, from connection: ClientConnection) -> BrokerError? {
        switch ClientFrameDecoder().decode(bytes) {
        case .failure(let rejection):
            metrics.frameRead(.invalid)
            return refuse(rejection.error, re: rejection.re, to: connection)
        case .success(.publish(let publish)):
            metrics.frameRead(.publish)
            if let watch = connection.watch { return refuse(watch.publishRefusal, re: publish.id, to: connection) }
            if let channel = publish.channel, channel != connection.identity {
                return refuse(BrokerError(.forbidden, "you may publish only on your own channel, \(connection.identity)"), re: publish.id, to: connection)
            }
            if let invalid = publish.position.validationError(now: clock.now()) {
                return refuse(invalid, re: publish.id, to: connection)
            }
            switch hub.publish(from: connection, position: publish.position) {
            case .success(let outcome):
                if let id = publish.id {
                    hub.reply(
                        .ack(.init(re: id, seq: outcome.seq, tracking: outcome.tracking, watchers: outcome.watchers, reason: outcome.untracked)),
                        to: connection)
                }
                return nil
            case .failure(let error):
                return refuse(error, re: publish.id, to: connection)
            }
        case .success(.subscribe(let subscribe)):
            metrics.frameRead(.subscribe)
            return hub.subscribe(connection, subscribe).map { refuse($0, re: subscribe.id, to: connection) }
        case .success(.unsubscribe(let unsubscribe)):
            metrics.frameRead(.unsubscribe)
            return hub.unsubscribe(connection, unsubscribe).map { refuse($0, re: unsubscribe.id, to: connection) }
        }
    }

    /// Answers a refused request, once the identity's budget allows it: mistakes are charged to the identity
    /// across its connections, before they are answered, so that no answer comes past the budget (a guess that is
    /// not answered teaches nothing). Being rate-limited costs nothing (the limiter already pushes back).
    @discardableResult
    private func refuse(_ error: BrokerError, re: String?, to connection: ClientConnection) -> BrokerError {
        metrics.rejected(error.code)
        connection.debug("refused a frame", metadata: ["code": "\(error.code.rawValue)"])
        if error.code != .rateLimited, !refusals.charge(connection.identity) {
            closeForTooManyErrors(connection, reason: "too many invalid frames")
            return error
        }
        hub.reply(.error(.init(re: re, error)), to: connection)
        return error
    }
}
