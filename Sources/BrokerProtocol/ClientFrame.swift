/// A frame a client sends to the broker over the WebSocket.
public enum ClientFrame: Sendable, Equatable {
    /// A volunteer publishes a position on their own channel.
    case publish(Publish)
    /// A donor asks to watch a volunteer.
    case subscribe(Subscribe)
    /// A donor stops watching.
    case unsubscribe(Unsubscribe)

    /// The longest request id the broker echoes back.
    public static let maximumIDLength = 64

    public struct Publish: Codable, Sendable, Equatable {
        public var id: String?
        /// Optional; when present it must be the sender's own identity.
        public var channel: String?
        public var position: Position

        public init(id: String? = nil, channel: String? = nil, position: Position) {
            self.id = id
            self.channel = channel
            self.position = position
        }
    }

    /// What a subscription names: a volunteer's channel, or a donation.
    public enum Target: Sendable, Equatable {
        case channel(String)
        case donation(String)
    }

    public struct Subscribe: Sendable, Equatable {
        public var id: String?
        public var target: Target
        /// Ask for the kept positions after this seq.
        public var since: Int64?

        public init(id: String? = nil, target: Target, since: Int64? = nil) {
            self.id = id
            self.target = target
            self.since = since
        }
    }

    public struct Unsubscribe: Sendable, Equatable {
        public var id: String?
        public var target: Target

        public init(id: String? = nil, target: Target) {
            self.id = id
            self.target = target
        }
    }

    /// The request id, echoed back as `re`.
    public var id: String? {
        switch self {
        case .publish(let frame): frame.id
        case .subscribe(let frame): frame.id
        case .unsubscribe(let frame): frame.id
        }
    }
}

extension ClientFrame: Encodable {
    private enum Keys: String, CodingKey {
        case type, id, channel, donation, since, position
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        func encode(target: Target) throws {
            switch target {
            case .channel(let channel): try container.encode(channel, forKey: .channel)
            case .donation(let donation): try container.encode(donation, forKey: .donation)
            }
        }
        switch self {
        case .publish(let frame):
            try container.encode("publish", forKey: .type)
            try container.encodeIfPresent(frame.id, forKey: .id)
            try container.encodeIfPresent(frame.channel, forKey: .channel)
            try container.encode(frame.position, forKey: .position)
        case .subscribe(let frame):
            try container.encode("subscribe", forKey: .type)
            try container.encodeIfPresent(frame.id, forKey: .id)
            try encode(target: frame.target)
            try container.encodeIfPresent(frame.since, forKey: .since)
        case .unsubscribe(let frame):
            try container.encode("unsubscribe", forKey: .type)
            try container.encodeIfPresent(frame.id, forKey: .id)
            try encode(target: frame.target)
        }
    }
}
