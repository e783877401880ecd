import BrokerProtocol

/// Reads a position event's plaintext as the sending node writes it (``ClusterEvent/plaintext()``) without
/// `JSONDecoder`, which cost a receiving node a third of its time: every position crossing nodes is read once on
/// each node that follows its shard.
///
/// It knows the one shape senders write (the members `k` "p", `n`, `c`, `s`, `p`, `t`, optionally `v`, then `ls`, in
/// any order, each once) and the plain tokens of ``JSONScanner``. Anything else (another kind, an escape in a
/// string, a `null`, an unknown or repeated member) it leaves to `JSONDecoder`, so whatever it accepts reads
/// exactly as `JSONDecoder` reads it, and every malformed event is still refused in one place.
enum PositionEventReader {
    /// The position event in `plaintext`, or `nil` to let `JSONDecoder` read it.
    static func read(_ plaintext: UnsafeBufferPointer<UInt8>) -> ClusterEvent? {
        var scanner = JSONScanner(bytes: plaintext)
        var isPosition = false
        var origin: String?, channel: String?, donations: [String]?
        var seq: Int64?, seenAt: Int64?, viewSeqs: [Int64]?
        var position: Position?
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        repeat {
            guard let key = scanner.rawString(), scanner.take(UInt8(ascii: ":")) else { return nil }
            if scanner.matches(key, "k") {
                guard !isPosition, let kind = scanner.rawString(), scanner.matches(kind, "p") else { return nil }
                isPosition = true
            } else if scanner.matches(key, "n") {
                guard origin == nil, let value = scanner.string() else { return nil }
                origin = value
            } else if scanner.matches(key, "c") {
                guard channel == nil, let value = scanner.string() else { return nil }
                channel = value
            } else if scanner.matches(key, "s") {
                guard seq == nil, let value = scanner.integer(maximumDigits: 18) else { return nil }
                seq = value
            } else if scanner.matches(key, "p") {
                guard position == nil, let value = scanner.positionObject() else { return nil }
                position = value
            } else if scanner.matches(key, "t") {
                guard donations == nil, let value = strings(&scanner) else { return nil }
                donations = value
            } else if scanner.matches(key, "v") {
                guard viewSeqs == nil, let value = integers(&scanner) else { return nil }
                viewSeqs = value
            } else if scanner.matches(key, "ls") {
                guard seenAt == nil, let value = scanner.integer(maximumDigits: 18) else { return nil }
                seenAt = value
            } else {
                return nil
            }
        } while scanner.take(UInt8(ascii: ","))
        guard scanner.take(UInt8(ascii: "}")), scanner.isAtEnd(), isPosition,
            let origin, let channel, let seq, let position, let donations, let seenAt
        else { return nil }
        return .position(origin: origin, channel: channel, seq: seq, position: position, donations: donations, viewSeqs: viewSeqs, seenAt: seenAt)
    }

    /// An array of plain strings.
    private static func strings(_ scanner: inout JSONScanner) -> [String]? {
        elements(&scanner) { $0.string() }
    }

    /// An array of integers.
    private static func integers(_ scanner: inout JSONScanner) -> [Int64]? {
        elements(&scanner) { $0.integer(maximumDigits: 18) }
    }

    /// An array whose every element `element` reads; `nil` as soon as one does not read.
    private static func elements<Element>(_ scanner: inout JSONScanner, _ element: (inout JSONScanner) -> Element?) -> [Element]? {
        guard scanner.take(UInt8(ascii: "[")) else { return nil }
        var values: [Element] = []
        if scanner.take(UInt8(ascii: "]")) { return values }
        repeat {
            guard let value = element(&scanner) else { return nil }
            values.append(value)
        } while scanner.take(UInt8(ascii: ","))
        guard scanner.take(UInt8(ascii: "]")) else { return nil }
        return values
    }
}
