import Foundation

/// Turns the bytes of a client's text frame into a ``ClientFrame``, or into the precise error the client gets back.
///
/// Every failure carries the frame's `id` when one could be read, so the error can be matched to its request.
public struct ClientFrameDecoder: Sendable {
    /// A refused frame: the error to send, and the request id to echo when the frame had a readable one.
    public struct Rejection: Error, Sendable, Equatable {
        public var re: String?
        public var error: BrokerError
    }

    public init() {}

    /// The loose shape every client frame shares; the typed frame is built from it.
    private struct Envelope: Decodable {
        var type: String
        var id: String?
        var channel: String?
        var donation: String?
        var since: Int64?
        var position: Position?
    }

    private struct IDOnly: Decodable {
        var id: String?
    }

    /// Decodes one frame.
    public func decode(_ bytes: some Collection<UInt8>) -> Result<ClientFrame, Rejection> {
        if let publish = bytes.withContiguousStorageIfAvailable(PublishFastPath.parse) ?? nil {
            return .success(.publish(publish))
        }
        return decodeStrictly(bytes)
    }

    /// Decodes one frame from contiguous bytes, as the connection handler reads them: the fast path is entered
    /// directly, without going through the generic `withContiguousStorageIfAvailable` on every frame read. Gives
    /// what the generic `decode` gives for the same bytes.
    public func decode(_ bytes: UnsafeRawBufferPointer) -> Result<ClientFrame, Rejection> {
        let publish = bytes.withMemoryRebound(to: UInt8.self, PublishFastPath.parse)
        if let publish { return .success(.publish(publish)) }
        return decodeStrictly(bytes)
    }

    /// Decodes one frame with Foundation's JSON decoder only, without the fast path for plain publishes.
    public func decodeStrictly(_ bytes: some Collection<UInt8>) -> Result<ClientFrame, Rejection> {
        let data = Data(bytes)
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: data)
        } catch let error as DecodingError {
            let re = (try? JSONDecoder().decode(IDOnly.self, from: data))?.id.flatMap(Self.usableID)
            return .failure(Rejection(re: re, error: Self.describe(error)))
        } catch {
            return .failure(Rejection(re: nil, error: BrokerError(.badRequest, "the frame is not valid JSON")))
        }
        return Self.frame(from: envelope)
    }

    private static func usableID(_ id: String) -> String? {
        id.count <= ClientFrame.maximumIDLength ? id : nil
    }

    private static func frame(from envelope: Envelope) -> Result<ClientFrame, Rejection> {
        let re = envelope.id.flatMap(usableID)
        func reject(_ code: ErrorCode, _ message: String) -> Result<ClientFrame, Rejection> {
            .failure(Rejection(re: re, error: BrokerError(code, message)))
        }
        if envelope.id != nil, re == nil {
            return reject(.badRequest, "id must be at most \(ClientFrame.maximumIDLength) characters")
        }
        func target() -> Result<ClientFrame.Target, Rejection> {
            switch (envelope.channel, envelope.donation) {
            case (let channel?, nil):
                guard let canonical = Identity.canonical(channel) else {
                    return .failure(Rejection(re: re, error: BrokerError(.badRequest, "channel must be an identity (e-mail) of 1 to 254 characters without spaces")))
                }
                return .success(.channel(canonical))
            case (nil, let donation?):
                guard DonationID.isValid(donation) else {
                    return .failure(Rejection(re: re, error: BrokerError(.badRequest, "donation must be 1 to 128 characters of letters, digits, '.', '_', ':' or '-'")))
                }
                return .success(.donation(donation))
            case (nil, nil):
                return .failure(Rejection(re: re, error: BrokerError(.badRequest, "\(envelope.type) needs a \"channel\" or a \"donation\"")))
            case (.some, .some):
                return .failure(Rejection(re: re, error: BrokerError(.badRequest, "\(envelope.type) takes a \"channel\" or a \"donation\", not both")))
            }
        }
        switch envelope.type {
        case "publish":
            guard let position = envelope.position else { return reject(.invalidPosition, "publish needs a \"position\" object") }
            var channel: String?
            if let raw = envelope.channel {
                guard let canonical = Identity.canonical(raw) else {
                    return reject(.badRequest, "channel must be an identity (e-mail) of 1 to 254 characters without spaces")
                }
                channel = canonical
            }
            return .success(.publish(.init(id: re, channel: channel, position: position)))
        case "subscribe":
            if let since = envelope.since, since < 0 { return reject(.badRequest, "since must be a seq, 0 or more") }
            return target().map { .subscribe(.init(id: re, target: $0, since: envelope.since)) }
        case "unsubscribe":
            return target().map { .unsubscribe(.init(id: re, target: $0)) }
        default:
            let shown = envelope.type.count > 32 ? String(envelope.type.prefix(32)) + "..." : envelope.type
            return reject(.badRequest, "unknown frame type \"\(shown)\"; expected publish, subscribe or unsubscribe")
        }
    }

    /// Maps a decoding failure to a message that names the field and what it should be.
    static func describe(_ error: DecodingError) -> BrokerError {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        func code(_ keys: [any CodingKey]) -> ErrorCode {
            keys.first?.stringValue == "position" ? .invalidPosition : .badRequest
        }
        switch error {
        case .keyNotFound(let key, let context):
            let keys = context.codingPath + [key]
            if keys.count == 1 && key.stringValue == "type" { return BrokerError(.badRequest, "the frame has no \"type\" field") }
            return BrokerError(code(keys), "\(path(keys)) is required")
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let keys = context.codingPath
            if keys.isEmpty { return BrokerError(.badRequest, "a frame must be a JSON object") }
            return BrokerError(code(keys), "\(path(keys)) must be \(describe(type))")
        case .dataCorrupted(let context):
            let keys = context.codingPath
            if keys.isEmpty { return BrokerError(.badRequest, "the frame is not valid JSON (or holds a number JSON cannot represent)") }
            return BrokerError(code(keys), "\(path(keys)) has a value out of range or of the wrong kind")
        @unknown default:
            return BrokerError(.badRequest, "the frame could not be read")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is Double.Type: "a number"
        case is Int64.Type, is Int.Type: "an integer"
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        default: "an object"
        }
    }
}
