/// A frame the broker sends to a client over the WebSocket.
public enum ServerFrame: Sendable, Equatable {
    case welcome(Welcome)
    case ack(Ack)
    case subscribed(Subscribed)
    case unsubscribed(Unsubscribed)
    case position(PositionUpdate)
    case state(StateChange)
    case arrival(Arrival)
    case presence(Presence)
    case error(ErrorReply)

    /// Sent once, right after the upgrade.
    public struct Welcome: Codable, Sendable, Equatable {
        /// The caller's identity as the broker sees it (canonical: NFC, ASCII letters lower-cased).
        public var identity: String
        /// Seconds between the broker's pings.
        public var heartbeat: Int

        public init(identity: String, heartbeat: Int) {
            self.identity = identity
            self.heartbeat = heartbeat
        }
    }

    /// The answer to a publish that carried an `id`.
    public struct Ack: Codable, Sendable, Equatable {
        public var re: String?
        /// The seq the position was kept under; absent when it was not kept.
        public var seq: Int64?
        /// Whether a donation of this volunteer is trackable now, so the position was kept and forwarded.
        public var tracking: Bool
        /// How many donors receive this channel's positions now.
        public var watchers: Int
        /// Why the position was kept for nobody; present only when `tracking` is false.
        public var reason: UntrackedReason?

        public init(re: String?, seq: Int64?, tracking: Bool, watchers: Int, reason: UntrackedReason? = nil) {
            self.re = re
            self.seq = seq
            self.tracking = tracking
            self.watchers = watchers
            self.reason = reason
        }
    }

    /// Why a published position was kept for nobody (the `reason` of an `ack` with `tracking:false`).
    public enum UntrackedReason: String, Codable, Sendable, Equatable, CaseIterable {
        /// No donation of the volunteer is trackable now.
        case noTrackableDonation = "no-trackable-donation"
        /// The fix was taken before the current trackable window of every trackable donation opened (before
        /// BEING-LOOKED-FOR or BEING-TAKEN-TO began, or during a pause), beyond the clock tolerance.
        case beforeWindow = "before-window"
        /// The fix is older than `max_position_age`: too old to show as where the volunteer is.
        case tooOld = "too-old"
    }

    /// A kept position and its seq.
    public struct KeptPosition: Codable, Sendable, Equatable {
        public var seq: Int64
        public var position: Position

        public init(seq: Int64, position: Position) {
            self.seq = seq
            self.position = position
        }
    }

    /// The answer to a subscribe that was allowed.
    public struct Subscribed: Codable, Sendable, Equatable {
        public var re: String?
        public var channel: String
        public var donation: String
        public var state: DonationState
        public var tracking: Bool
        public var destination: Destination?
        public var home: Home
        public var institution: Institution?
        /// The newest position kept while this donation was trackable, if any.
        public var last: KeptPosition?
        /// Whether the volunteer is connected and publishing; `nil` (an explicit null) when the broker does not say,
        /// as for a donor subscribed while the trip is paused.
        public var online: Bool?

        public init(
            re: String?, channel: String, donation: String, state: DonationState, tracking: Bool, destination: Destination?,
            home: Home, institution: Institution?, last: KeptPosition?, online: Bool?
        ) {
            self.re = re
            self.channel = channel
            self.donation = donation
            self.state = state
            self.tracking = tracking
            self.destination = destination
            self.home = home
            self.institution = institution
            self.last = last
            self.online = online
        }

        private enum CodingKeys: String, CodingKey {
            case re, channel, donation, state, tracking, destination, home, institution, last, online
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(re, forKey: .re)
            try container.encode(channel, forKey: .channel)
            try container.encode(donation, forKey: .donation)
            try container.encode(state, forKey: .state)
            try container.encode(tracking, forKey: .tracking)
            try container.encode(destination, forKey: .destination)  // an explicit null while paused
            try container.encode(home, forKey: .home)
            try container.encode(institution, forKey: .institution)
            try container.encode(last, forKey: .last)  // an explicit null before the first fix
            try container.encode(online, forKey: .online)  // an explicit null when not told
        }
    }

    /// Why a subscription ended.
    public enum UnsubscribeReason: String, Codable, Sendable {
        /// The client asked.
        case client
        /// The donation reached the institution.
        case delivered = "DELIVERED"
        /// The donation was cancelled.
        case cancelled = "CANCELLED"
        /// The donation lost its volunteer or was given to another one.
        case volunteerChanged = "volunteer-changed"
        /// The backend deleted the donation.
        case deleted
    }

    /// A subscription ended; after it nothing of that channel reaches the client for that donation.
    public struct Unsubscribed: Codable, Sendable, Equatable {
        public var re: String?
        public var channel: String
        public var donation: String?
        public var reason: UnsubscribeReason

        public init(re: String?, channel: String, donation: String?, reason: UnsubscribeReason) {
            self.re = re
            self.channel = channel
            self.donation = donation
            self.reason = reason
        }
    }

    /// A position kept on a channel; the same bytes go to every subscriber.
    public struct PositionUpdate: Codable, Sendable, Equatable {
        public var channel: String
        public var seq: Int64
        public var position: Position

        public init(channel: String, seq: Int64, position: Position) {
            self.channel = channel
            self.seq = seq
            self.position = position
        }
    }

    /// A subscribed donation moved between non-final states.
    public struct StateChange: Codable, Sendable, Equatable {
        public var channel: String
        public var donation: String
        public var state: DonationState
        public var tracking: Bool
        public var destination: Destination?

        public init(channel: String, donation: String, state: DonationState) {
            self.channel = channel
            self.donation = donation
            self.state = state
            self.tracking = state.isTrackable
            self.destination = state.destination
        }

        private enum CodingKeys: String, CodingKey {
            case channel, donation, state, tracking, destination
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(channel, forKey: .channel)
            try container.encode(donation, forKey: .donation)
            try container.encode(state, forKey: .state)
            try container.encode(tracking, forKey: .tracking)
            try container.encode(destination, forKey: .destination)  // an explicit null while paused
        }
    }

    /// The volunteer came within the arrival radius of the current destination.
    public struct Arrival: Codable, Sendable, Equatable {
        public var channel: String
        public var donation: String
        public var place: Destination
        /// Metres from the destination at the position that arrived.
        public var distance: Double

        public init(channel: String, donation: String, place: Destination, distance: Double) {
            self.channel = channel
            self.donation = donation
            self.place = place
            self.distance = distance
        }
    }

    /// The volunteer went offline (disconnected, or silent for 3 publish intervals) or came back.
    public struct Presence: Codable, Sendable, Equatable {
        public var channel: String
        public var online: Bool
        /// When the broker last heard from the volunteer, in milliseconds since the Unix epoch.
        public var lastSeen: Int64?

        public init(channel: String, online: Bool, lastSeen: Int64?) {
            self.channel = channel
            self.online = online
            self.lastSeen = lastSeen
        }
    }

    /// A refused request.
    public struct ErrorReply: Codable, Sendable, Equatable {
        public var re: String?
        public var code: ErrorCode
        public var message: String

        public init(re: String?, code: ErrorCode, message: String) {
            self.re = re
            self.code = code
            self.message = message
        }

        public init(re: String?, _ error: BrokerError) {
            self.init(re: re, code: error.code, message: error.message)
        }
    }

    /// The value of the frame's `type` field.
    public var type: String {
        switch self {
        case .welcome: "welcome"
        case .ack: "ack"
        case .subscribed: "subscribed"
        case .unsubscribed: "unsubscribed"
        case .position: "position"
        case .state: "state"
        case .arrival: "arrival"
        case .presence: "presence"
        case .error: "error"
        }
    }
}

extension ServerFrame: Codable {
    private enum TypeKey: String, CodingKey {
        case type
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .welcome(let frame): try frame.encode(to: encoder)
        case .ack(let frame): try frame.encode(to: encoder)
        case .subscribed(let frame): try frame.encode(to: encoder)
        case .unsubscribed(let frame): try frame.encode(to: encoder)
        case .position(let frame): try frame.encode(to: encoder)
        case .state(let frame): try frame.encode(to: encoder)
        case .arrival(let frame): try frame.encode(to: encoder)
        case .presence(let frame): try frame.encode(to: encoder)
        case .error(let frame): try frame.encode(to: encoder)
        }
        var container = encoder.container(keyedBy: TypeKey.self)
        try container.encode(type, forKey: .type)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: TypeKey.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "welcome": self = .welcome(try Welcome(from: decoder))
        case "ack": self = .ack(try Ack(from: decoder))
        case "subscribed": self = .subscribed(try Subscribed(from: decoder))
        case "unsubscribed": self = .unsubscribed(try Unsubscribed(from: decoder))
        case "position": self = .position(try PositionUpdate(from: decoder))
        case "state": self = .state(try StateChange(from: decoder))
        case "arrival": self = .arrival(try Arrival(from: decoder))
        case "presence": self = .presence(try Presence(from: decoder))
        case "error": self = .error(try ErrorReply(from: decoder))
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "unknown server frame type \(type)")
        }
    }
}
