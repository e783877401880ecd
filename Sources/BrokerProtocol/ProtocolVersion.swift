/// The version of the wire protocol docs/PROTOCOL.md describes; it changes only when a change would break a
/// client written against the previous one.
public enum ProtocolVersion {
    /// The protocol this build speaks.
    public static let current = 1
}
