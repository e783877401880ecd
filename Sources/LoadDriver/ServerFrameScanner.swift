/// Reads `seq`, `timestamp` and `accuracy` out of a `position` frame without a JSON decoder, so the bench's
/// subscribers spend their time receiving rather than parsing.
///
/// The broker writes position frames with sorted keys, exactly
/// `{"channel":"..","position":{"accuracy":..,..,"timestamp":..},"seq":..,"type":"position"}`
/// (docs/PROTOCOL.md section 2). Anything else is left to the full decoder.
public enum ServerFrameScanner {
    /// The fields the bench needs from a position frame.
    public struct PositionFields: Equatable, Sendable {
        public var seq: Int64
        public var timestamp: Int64
        public var accuracy: Double?
    }

    private static let suffix = Array(#","type":"position"}"#.utf8)
    private static let seqKey = Array(#","seq":"#.utf8)
    private static let timestampKey = Array(#""timestamp":"#.utf8)
    private static let accuracyKey = Array(#"{"accuracy":"#.utf8)
    private static let positionKey = Array(#""position":"#.utf8)

    /// The fields of a position frame, or `nil` when `bytes` is not one.
    public static func position(_ bytes: UnsafeRawBufferPointer) -> PositionFields? {
        let count = bytes.count
        guard count > suffix.count + seqKey.count, endsWith(bytes, suffix) else { return nil }
        let seqEnd = count - suffix.count
        guard let seqStart = lastIndex(of: seqKey, in: bytes, before: seqEnd),
            let seq = integer(bytes, from: seqStart + seqKey.count, to: seqEnd),
            let timestampAt = lastIndex(of: timestampKey, in: bytes, before: seqStart)
        else { return nil }
        let timestampFrom = timestampAt + timestampKey.count
        var timestampTo = timestampFrom
        while timestampTo < seqStart, bytes[timestampTo] != UInt8(ascii: "}") { timestampTo += 1 }
        guard let timestamp = integer(bytes, from: timestampFrom, to: timestampTo) else { return nil }
        var accuracy: Double?
        if let positionAt = lastIndex(of: positionKey, in: bytes, before: timestampAt),
            matches(bytes, accuracyKey, at: positionAt + positionKey.count)
        {
            let from = positionAt + positionKey.count + accuracyKey.count
            var to = from
            while to < timestampAt, bytes[to] != UInt8(ascii: ",") { to += 1 }
            accuracy = Double(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[from..<to]), as: UTF8.self))
        }
        return PositionFields(seq: seq, timestamp: timestamp, accuracy: accuracy)
    }

    /// Convenience for tests and callers holding an array.
    public static func position(_ bytes: [UInt8]) -> PositionFields? {
        bytes.withUnsafeBytes { position($0) }
    }

    private static func endsWith(_ bytes: UnsafeRawBufferPointer, _ tail: [UInt8]) -> Bool {
        matches(bytes, tail, at: bytes.count - tail.count)
    }

    private static func matches(_ bytes: UnsafeRawBufferPointer, _ pattern: [UInt8], at start: Int) -> Bool {
        guard start >= 0, start + pattern.count <= bytes.count else { return false }
        for offset in 0..<pattern.count where bytes[start + offset] != pattern[offset] { return false }
        return true
    }

    private static func lastIndex(of pattern: [UInt8], in bytes: UnsafeRawBufferPointer, before end: Int) -> Int? {
        var start = end - pattern.count
        while start >= 0 {
            if matches(bytes, pattern, at: start) { return start }
            start -= 1
        }
        return nil
    }

    private static func integer(_ bytes: UnsafeRawBufferPointer, from: Int, to: Int) -> Int64? {
        guard from < to, to - from <= 18 else { return nil }
        var value: Int64 = 0
        for index in from..<to {
            let digit = bytes[index]
            guard digit >= 0x30, digit <= 0x39 else { return nil }
            value = value * 10 + Int64(digit - 0x30)
        }
        return value
    }
}
