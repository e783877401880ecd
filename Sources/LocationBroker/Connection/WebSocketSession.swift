import BrokerProtocol
import DequeModule
import Foundation
import WSCore
import Logging
import NIOCore
import NIOWebSocket

/// Runs one client's WebSocket: a reader that handles the client's frames, and a writer task that performs the
/// close (and writes frames until a ``SocketWriter`` takes over). Nothing the reader or the hub does ever waits
/// for this client's socket.
struct WebSocketSession: Sendable {
    let hub: Hub
    let heartbeatSeconds: Int
    let maxFrameBytes: Int
    /// Invalid frames a connection may send per minute, as a burst; past it the connection is closed (4009).
    var invalidFramesPerMinute = 10
    /// How long a close we sent may wait for the client's answer before the socket is dropped.
    var closeGrace: Duration = .seconds(5)

    private enum Role: Sendable {
        case reader, writer, grace
    }

    /// Serves the connection until either side closes it.
    func run(_ connection: ClientConnection, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        connection.logger.debug("websocket open")
        defer {
            hub.disconnect(connection)
            connection.logger.debug("websocket closed")
        }
        hub.reply(.welcome(.init(identity: connection.identity, heartbeat: heartbeatSeconds)), to: connection)
        try await withThrowingTaskGroup(of: Role.self) { group in
            group.addTask {
                try await read(connection, inbound)
                return .reader
            }
            group.addTask {
                await write(connection, outbound)
                return .writer
            }
            var readerDone = false
            var writerDone = false
            loop: while let finished = try await group.next() {
                switch finished {
                case .grace:
                    break loop
                case .reader:
                    readerDone = true
                    if writerDone { break loop }
                    // The client is gone or closed; let the writer finish a close we queued, else stop it.
                    if !connection.outbox.hasPendingClose { connection.outbox.finish() }
                case .writer:
                    writerDone = true
                    if readerDone { break loop }
                    // We sent a close (or the socket failed): give the client a moment to answer.
                    group.addTask {
                        try? await Task.sleep(for: closeGrace)
                        return .grace
                    }
                }
            }
            group.cancelAll()
        }
    }

    /// Handles the client's frames in order until the client closes, or until we asked to close.
    private func read(_ connection: ClientConnection, _ inbound: WebSocketInboundStream) async throws {
        let decoder = ClientFrameDecoder()
        var errorBudget = TokenBucket(rate: Double(invalidFramesPerMinute) / 60, burst: invalidFramesPerMinute, now: hub.clock())
        for try await message in inbound.messages(maxSize: maxFrameBytes) {
            if connection.outbox.isClosing { break }
            let refused: BrokerError?
            switch message {
            case .text(let text):
                refused = handle(text.utf8, from: connection, decoder: decoder)
            case .binary:
                hub.metrics.framesIn["invalid"]?.increment()
                refused = refuse(BrokerError(.badRequest, "binary frames are not accepted; send JSON text frames"), re: nil, to: connection)
            }
            // Mistakes cost budget; being rate-limited does not (the limiter already pushes back).
            if let refused, refused.code != .rateLimited, !errorBudget.take(now: hub.clock()) {
                connection.logger.notice("closing a connection that keeps sending invalid frames")
                connection.outbox.close(code: CloseCode.tooManyErrors, reason: "too many invalid frames", discardPending: false)
                break
            }
        }
    }

    /// Writes what the outbox hands over (a close, or frames while no socket writer is attached) until the
    /// outbox finishes or a close is written.
    private func write(_ connection: ClientConnection, _ outbound: WebSocketOutboundWriter) async {
        var batch = Deque<Outbox.Entry>()
        while await connection.outbox.drain(into: &batch) {
            for entry in batch {
                if let close = entry.close {
                    connection.logger.debug("closing websocket", metadata: ["code": "\(close.code)", "reason": "\(close.reason)"])
                    try? await outbound.close(WebSocketErrorCode(codeNumber: Int(close.code)), reason: close.reason)
                    return
                }
                do {
                    try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: entry.frame)))
                } catch {
                    connection.outbox.finish()
                    return
                }
                hub.metrics.framesOut.increment()
            }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Handles one text frame.
    /// - Returns: the refusal sent back, if the frame was refused.
    private func handle(_ bytes: String.UTF8View, from connection: ClientConnection, decoder: ClientFrameDecoder) -> BrokerError? {
        switch decoder.decode(bytes) {
        case .failure(let rejection):
            hub.metrics.framesIn["invalid"]?.increment()
            return refuse(rejection.error, re: rejection.re, to: connection)
        case .success(.publish(let publish)):
            hub.metrics.framesIn["publish"]?.increment()
            if let channel = publish.channel, channel != connection.identity {
                return refuse(BrokerError(.forbidden, "you may publish only on your own channel, \(connection.identity)"), re: publish.id, to: connection)
            }
            if let invalid = publish.position.validationError(now: hub.clock()) {
                return refuse(invalid, re: publish.id, to: connection)
            }
            switch hub.publish(as: connection.identity, position: publish.position) {
            case .success(let outcome):
                if let id = publish.id {
                    hub.reply(.ack(.init(re: id, seq: outcome.seq, tracking: outcome.tracking, watchers: outcome.watchers)), to: connection)
                }
                return nil
            case .failure(let error):
                return refuse(error, re: publish.id, to: connection)
            }
        case .success(.subscribe(let subscribe)):
            hub.metrics.framesIn["subscribe"]?.increment()
            return hub.subscribe(connection, subscribe).map { refuse($0, re: subscribe.id, to: connection) }
        case .success(.unsubscribe(let unsubscribe)):
            hub.metrics.framesIn["unsubscribe"]?.increment()
            return hub.unsubscribe(connection, unsubscribe).map { refuse($0, re: unsubscribe.id, to: connection) }
        }
    }

    @discardableResult
    private func refuse(_ error: BrokerError, re: String?, to connection: ClientConnection) -> BrokerError {
        hub.metrics.reject(error.code)
        connection.logger.debug("refused a frame", metadata: ["code": "\(error.code.rawValue)"])
        hub.reply(.error(.init(re: re, error)), to: connection)
        return error
    }
}
