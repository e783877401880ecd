import NIOCore
import NIOWebSocket

/// Turns a client's data frames into whole messages (RFC 6455 §5.4): a text or binary frame, possibly followed by
/// continuations, the last one with FIN. Control frames never reach it; they may arrive between fragments.
///
/// Bounded: a message whose fragments add up past `maxBytes` is refused as soon as it does, not when it ends.
struct MessageAssembler {
    /// A complete message, unmasked.
    enum Message {
        case text(ByteBuffer)
        case binary(ByteBuffer)
    }

    /// Why the peer's frames are not a valid message; each closes the connection with the code given.
    enum Failure: Error, Equatable {
        /// The message is larger than the limit (1009).
        case tooLarge
        /// A continuation frame with no message to continue (1002).
        case unexpectedContinuation
        /// A new message began before the previous one was finished (1002).
        case unfinishedMessage

        /// The WebSocket close code for this failure.
        var closeCode: WebSocketErrorCode {
            self == .tooLarge ? .messageTooLarge : .protocolError
        }

        /// Says what was wrong, for the close frame's reason.
        var reason: String {
            switch self {
            case .tooLarge: "message too large"
            case .unexpectedContinuation: "continuation frame with no message to continue"
            case .unfinishedMessage: "new message before the previous one was finished"
            }
        }
    }

    let maxBytes: Int
    private var partial: (binary: Bool, buffer: ByteBuffer)?

    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    /// Takes one data frame (text, binary or continuation).
    /// - Returns: the message the frame completes, `nil` while a message is still incomplete, or why the frames
    ///   are refused.
    mutating func receive(_ frame: WebSocketFrame) -> Result<Message?, Failure> {
        switch frame.opcode {
        case .text, .binary:
            guard partial == nil else { return .failure(.unfinishedMessage) }
            let data = frame.unmaskedData
            guard data.readableBytes <= maxBytes else { return .failure(.tooLarge) }
            let binary = frame.opcode == .binary
            if frame.fin { return .success(binary ? .binary(data) : .text(data)) }
            partial = (binary, data)
            return .success(nil)
        case .continuation:
            guard var message = partial else { return .failure(.unexpectedContinuation) }
            partial = nil
            var data = frame.unmaskedData
            guard message.buffer.readableBytes + data.readableBytes <= maxBytes else { return .failure(.tooLarge) }
            message.buffer.writeBuffer(&data)
            if frame.fin { return .success(message.binary ? .binary(message.buffer) : .text(message.buffer)) }
            partial = message
            return .success(nil)
        default:
            return .success(nil)
        }
    }
}
