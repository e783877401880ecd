/// Reads the common publish frame without Foundation's JSON decoder, which costs more than the rest of a
/// publish together.
///
/// It accepts only the plain shape phones send: one object with `type` "publish", an optional `id` and
/// `channel`, and a `position` object of numbers, each key at most once, strings of printable ASCII without
/// escapes, numbers in strict JSON grammar without exponents, an integer `timestamp`. For anything else (an error, an unknown
/// key, an escape, `null`, a duplicated key...) it returns `nil` and the strict decoder decides, so every
/// refusal still comes from one place with one message. Whatever it accepts, it reads exactly as the strict
/// decoder would; tests and the fuzz target check that.
enum PublishFastPath {
    /// The publish frame in `bytes`, or `nil` to let the strict decoder handle them.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> ClientFrame.Publish? {
        var scanner = JSONScanner(bytes: bytes)
        return publish(&scanner)
    }

    private static func publish(_ scanner: inout JSONScanner) -> ClientFrame.Publish? {
        var sawType = false
        var id: String?
        var channel: String?
        var position: Position?
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        repeat {
            // Keys are compared as bytes: no String is made for them, nor for "publish".
            guard let key = scanner.rawString(), scanner.take(UInt8(ascii: ":")) else { return nil }
            if scanner.matches(key, "type") {
                guard !sawType, let value = scanner.rawString(), scanner.matches(value, "publish") else { return nil }
                sawType = true
            } else if scanner.matches(key, "id") {
                guard id == nil, let value = scanner.string(), value.utf8.count <= ClientFrame.maximumIDLength else { return nil }
                id = value
            } else if scanner.matches(key, "channel") {
                guard channel == nil, let value = scanner.string(), let canonical = Identity.canonical(value) else { return nil }
                channel = canonical
            } else if scanner.matches(key, "position") {
                guard position == nil, let value = scanner.positionObject() else { return nil }
                position = value
            } else {
                return nil
            }
        } while scanner.take(UInt8(ascii: ","))
        guard scanner.take(UInt8(ascii: "}")), sawType, let position, scanner.isAtEnd() else { return nil }
        return ClientFrame.Publish(id: id, channel: channel, position: position)
    }
}
