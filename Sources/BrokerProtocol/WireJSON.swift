import Foundation

/// The JSON settings every party uses, so that the same value always encodes to the same bytes.
public enum WireJSON {
    /// An encoder with sorted keys and unescaped slashes.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// Encodes a value to UTF-8 JSON bytes.
    public static func encode(_ value: some Encodable) throws -> Data {
        try encoder().encode(value)
    }

    /// Decodes a server frame, as a client does.
    public static func decodeServerFrame(_ bytes: some Collection<UInt8>) throws -> ServerFrame {
        try JSONDecoder().decode(ServerFrame.self, from: Data(bytes))
    }
}
