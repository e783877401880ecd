/// Writes the `welcome` server frame straight to bytes, without JSONEncoder's reflection: every connection gets
/// one as it opens, so an encoder run would be paid per connection in a connect storm. The bytes are those
/// ``WireJSON`` writes for ``ServerFrame/welcome(_:)`` (ProtocolTests' `WelcomeFrameEncoderTests`).
public enum WelcomeFrameEncoder {
    /// Encodes `{"heartbeat":..,"identity":..,"type":"welcome"}` into a temporary buffer and hands its bytes to
    /// `body`.
    public static func withEncoded<Result>(_ welcome: ServerFrame.Welcome, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        var identity = welcome.identity
        return try identity.withUTF8 { identity in
            // The keys and punctuation, a 20-digit integer, and at most 6 bytes (\u00XX) per byte of the identity.
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64 + 20 + 6 * identity.count) { buffer in
                var writer = PositionFrameEncoder.ByteWriter(buffer)
                writer.literal(#"{"heartbeat":"#)
                writer.integer(Int64(welcome.heartbeat))
                writer.literal(#","identity":"#)
                writer.string(identity)
                writer.literal(#","type":"welcome"}"#)
                return try body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[..<writer.count])))
            }
        }
    }
}
