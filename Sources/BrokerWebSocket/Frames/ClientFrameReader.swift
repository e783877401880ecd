import NIOCore
import NIOWebSocket

/// Reads a client's WebSocket frames out of its socket's bytes, read after read, in the connection handler: what
/// NIO's `ByteToMessageHandler(WebSocketFrameDecoder)` does in a handler of its own (a handler of its own costs a
/// hop, a `NIOAny` and a frame's storage on every publish: docs/BENCHMARKS.md, "Decisions that shaped the hot
/// path"), with its rules (``ClientFrameHeader``).
///
/// A frame that is whole in a read is handed over where it lies. The start of a frame whose end has not come yet
/// is kept as a compact copy, not as a slice that would keep the socket's whole receive buffer alive; the next
/// read is appended to it. What is kept is at most one frame (its header checked against the frame size first)
/// and what came with it in one read.
///
/// One word in the connection handler (an idle connection's handler is most of its memory): between frames, as
/// nearly always, it holds nothing.
package struct ClientFrameReader {
    /// The start of a frame kept for the next read; a class, so that the reader stays one word.
    private final class Kept {
        var bytes: ByteBuffer

        init(_ bytes: ByteBuffer) { self.bytes = bytes }
    }

    private enum State {
        case betweenFrames
        case keeping(Kept)
        /// A frame broke the rules: nothing more is read.
        case refused
    }

    private var state = State.betweenFrames

    /// The start of a frame kept for the next read, if one is.
    var unreadBytes: ByteBuffer? {
        guard case .keeping(let kept) = state else { return nil }
        return kept.bytes
    }

    /// Hands `body` each whole frame of what was kept and `bytes`, in order: the frame's header and a buffer whose
    /// reader index is the frame's first byte. Keeps what starts a frame that is not whole yet.
    /// - Parameter body: returns `false` when no more frames are to be read (the socket closed): the rest is
    ///   dropped.
    /// - Throws: NIO's decoder's error for the first frame that breaks its rules (the frames before it were
    ///   handed over); nothing is kept, and nothing is read from then on.
    mutating func read(
        _ incoming: ByteBuffer, maxFrameBytes: Int, _ body: (ClientFrameHeader, ByteBuffer) -> Bool
    ) throws(NIOWebSocketError) {
        var bytes: ByteBuffer
        let box: Kept?
        switch state {
        case .refused:
            return
        case .betweenFrames:
            bytes = incoming
            box = nil
        case .keeping(let kept):
            // Unique once the box lets go of it: the new bytes are appended, not the whole copied.
            bytes = kept.bytes
            kept.bytes = ByteBuffer()
            var incoming = incoming
            bytes.writeBuffer(&incoming)
            box = kept
        }
        state = .betweenFrames
        do throws(NIOWebSocketError) {
            while let header = try ClientFrameHeader.read(bytes, maxFrameBytes: maxFrameBytes), bytes.readableBytes >= header.frameBytes {
                guard body(header, bytes) else { return }
                bytes.moveReaderIndex(forwardBy: header.frameBytes)
            }
        } catch {
            state = .refused
            throw error
        }
        guard bytes.readableBytes > 0 else { return }
        if let box {
            bytes.discardReadBytes()
            box.bytes = bytes
            state = .keeping(box)
        } else {
            // The broker's own memory (the channel's allocator is the default one too); asked for only here, not on
            // every read.
            var copy = ByteBufferAllocator().buffer(capacity: bytes.readableBytes)
            copy.writeImmutableBuffer(bytes)
            state = .keeping(Kept(copy))
        }
    }
}
