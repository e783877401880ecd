import Foundation
import NIOCore

/// A server frame encoded once, as the transport sends it: the hub encodes each frame's JSON payload once and
/// the transport frames it once (``Framing``), then the same bytes go to every subscriber and into the
/// channel's history. Nothing is built per delivery.
package struct PreparedFrame: Sendable {
    /// The frame as the transport writes it (for a WebSocket: the header, then the payload).
    package let bytes: ByteBuffer
    /// Where the JSON payload starts within ``bytes``.
    package let payloadOffset: Int

    /// A frame whose transport bytes are `bytes`, its JSON payload starting `payloadOffset` bytes in.
    package init(bytes: ByteBuffer, payloadOffset: Int) {
        self.bytes = bytes
        self.payloadOffset = payloadOffset
    }

    /// The bytes the frame counts for against an outbox's byte limit.
    package var size: Int { bytes.readableBytes }

    /// The JSON payload, a view on ``bytes`` (no copy).
    package var payload: ByteBuffer {
        bytes.getSlice(at: bytes.readerIndex + payloadOffset, length: bytes.readableBytes - payloadOffset) ?? ByteBuffer()
    }
}

/// How a transport frames a payload: given to the hub at construction, called once per frame the hub makes.
package struct Framing: Sendable {
    private let make: @Sendable (UnsafeRawBufferPointer, inout ByteBuffer?) -> PreparedFrame

    /// A framing that wraps each payload with `make`, in a buffer of its own.
    package init(_ make: @escaping @Sendable (UnsafeRawBufferPointer) -> PreparedFrame) {
        self.make = { payload, _ in make(payload) }
    }

    /// A framing that wraps each payload with `make`, which may write the frame into the buffer it is handed (the
    /// storage of a frame the caller no longer keeps) instead of allocating one.
    package init(reusing make: @escaping @Sendable (UnsafeRawBufferPointer, inout ByteBuffer?) -> PreparedFrame) {
        self.make = make
    }

    /// The payload as it is, with no header (for sinks that keep JSON, such as the core's tests).
    package static let plain = Framing { payload in
        var buffer = ByteBufferAllocator().buffer(capacity: payload.count)
        buffer.writeBytes(payload)
        return PreparedFrame(bytes: buffer, payloadOffset: 0)
    }

    /// Frames `payload` for the transport.
    package func prepare(_ payload: some ContiguousBytes) -> PreparedFrame {
        var none: ByteBuffer?
        return payload.withUnsafeBytes { make($0, &none) }
    }

    /// Frames `payload` for the transport, in `storage` if the framing reuses buffers (it takes it: `storage` is
    /// `nil` afterwards). A buffer still shared with a frame someone holds is not written over: `ByteBuffer` is
    /// copy-on-write, so the framing then gets fresh storage.
    package func prepare(_ payload: some ContiguousBytes, reusing storage: inout ByteBuffer?) -> PreparedFrame {
        payload.withUnsafeBytes { make($0, &storage) }
    }
}
