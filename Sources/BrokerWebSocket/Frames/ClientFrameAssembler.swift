import NIOCore
import NIOWebSocket

/// What the connection handler does first with each frame the client sends, inside the handler rather than in
/// handlers of their own before it (every read walks every handler of the pipeline).
///
/// It refuses data frames that are not masked (RFC 6455 §5.1). And it joins a
/// fragmented message (§5.4) with the rules and limits of NIO's `NIOWebSocketFrameAggregator`, which it
/// replaces: a continuation with no message to continue, or a new message before the last one ended, is refused
/// (1002); a message in more than ``WebSocketConnectionHandler/maxFragments`` fragments, or longer than the
/// message size, is refused (1009); the message being joined is forgotten on any of these. Control frames pass
/// between fragments. What is kept of a message is a compact, unmasked copy: a fragment read from the socket is
/// a slice that would keep the whole receive buffer alive while the message's last fragment is awaited.
///
/// One reference in the connection handler, `nil` but while a message is being joined: an idle connection's
/// handler is most of its memory.
package struct ClientFrameAssembler {
    /// What to do with a frame the client sent.
    enum Outcome {
        /// A frame to act on: a control frame or a whole message as read, or a joined message (unmasked, without a
        /// mask key).
        case frame(WebSocketFrame)
        /// A fragment, kept until its message's last.
        case kept
        /// The frame breaks the protocol: the connection is closed with the violation's code.
        case violation(WebSocketViolation)
    }

    /// A message being joined; a class, so that a connection that never fragments pays one reference for it.
    private final class Partial {
        let opcode: WebSocketOpcode
        /// The fragments so far, unmasked, one after the other.
        var bytes: ByteBuffer
        var fragments = 0

        init(opcode: WebSocketOpcode, bytes: ByteBuffer) {
            self.opcode = opcode
            self.bytes = bytes
        }
    }

    private var partial: Partial?

    /// Whether a message is being joined: a new one would be refused.
    var isJoining: Bool { partial != nil }

    /// What is kept of the message being joined, if one is: its bytes so far.
    var keptBytes: ByteBuffer? { partial?.bytes }

    /// Takes the next frame the client sent.
    /// - Parameters:
    ///   - maxFragments: the fragments one message may come in.
    ///   - maxBytes: the longest message, all its fragments together.
    mutating func take(_ frame: WebSocketFrame, maxFragments: Int, maxBytes: Int, allocator: ByteBufferAllocator) -> Outcome {
        switch frame.opcode {
        case .text, .binary, .continuation:
            break
        default:
            // A control frame (or an unknown opcode, which the handler refuses) is never part of a message.
            return .frame(frame)
        }
        // The mask is checked before anything is joined, whose copy drops it; the message being joined is kept.
        guard let maskKey = frame.maskKey else { return .violation(.unmasked) }
        if frame.opcode == .continuation {
            guard partial != nil else { return fail(.unexpectedContinuation) }
        } else {
            guard partial == nil else { return fail(.unfinishedMessage) }
            // A whole message in one frame, as nearly every message comes: acted on as read.
            if frame.fin { return .frame(frame) }
        }
        let fragments = partial?.fragments ?? 0
        // A fragment that is not the last promises one more, which must fit too.
        guard fragments < maxFragments, frame.fin || fragments + 1 < maxFragments else { return fail(.tooManyFragments) }
        guard (partial?.bytes.readableBytes ?? 0) + frame.length <= maxBytes else { return fail(.tooLarge) }
        let message = partial ?? Partial(opcode: frame.opcode, bytes: allocator.buffer(capacity: frame.length))
        partial = message
        message.fragments += 1
        let start = message.bytes.readableBytes
        message.bytes.writeImmutableBuffer(frame.data)
        message.bytes.withUnsafeMutableReadableBytes { bytes in
            // Each fragment has its own mask, from its first byte.
            WebSocketFrame.unmask(UnsafeMutableRawBufferPointer(rebasing: bytes[start...]), key: maskKey)
        }
        guard frame.fin else { return .kept }
        partial = nil
        return .frame(WebSocketFrame(fin: true, opcode: message.opcode, data: message.bytes))
    }

    /// Forgets the message being joined and reports the violation.
    private mutating func fail(_ violation: WebSocketViolation) -> Outcome {
        partial = nil
        return .violation(violation)
    }
}
