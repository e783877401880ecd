/// One fix of a volunteer's device, as published and as delivered.
public struct Position: Codable, Sendable, Equatable {
    /// Latitude in degrees, [-90, 90].
    public var lat: Double
    /// Longitude in degrees, [-180, 180].
    public var lon: Double
    /// Horizontal accuracy in metres, >= 0.
    public var accuracy: Double?
    /// Ground speed in metres per second, >= 0.
    public var speed: Double?
    /// Course over ground in degrees, [0, 360); 0 is north.
    public var heading: Double?
    /// When the fix was taken, in milliseconds since the Unix epoch.
    public var timestamp: Int64

    public init(lat: Double, lon: Double, accuracy: Double? = nil, speed: Double? = nil, heading: Double? = nil, timestamp: Int64) {
        self.lat = lat
        self.lon = lon
        self.accuracy = accuracy
        self.speed = speed
        self.heading = heading
        self.timestamp = timestamp
    }

    private enum CodingKeys: String, CodingKey {
        case lat, lon, accuracy, speed, heading, timestamp
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        lat = try container.decode(Double.self, forKey: .lat)
        lon = try container.decode(Double.self, forKey: .lon)
        accuracy = try container.decodeIfPresent(Double.self, forKey: .accuracy)
        speed = try container.decodeIfPresent(Double.self, forKey: .speed)
        heading = try container.decodeIfPresent(Double.self, forKey: .heading)
        // Read as a number first, so that 1.5 is reported as a bad timestamp rather than as bad JSON.
        let milliseconds = try container.decode(Double.self, forKey: .timestamp)
        guard milliseconds.isFinite, milliseconds == milliseconds.rounded(), abs(milliseconds) < 9e15 else {
            throw DecodingError.dataCorruptedError(
                forKey: .timestamp, in: container, debugDescription: "timestamp must be a whole number of milliseconds")
        }
        timestamp = Int64(milliseconds)
    }

    /// How far in the future a fix's timestamp may be, to allow for clock skew between phone and server.
    public static let maximumClockSkewMilliseconds: Int64 = 60_000

    /// Checks every field's range.
    /// - Parameter now: the server's clock, in milliseconds since the Unix epoch.
    /// - Returns: `nil` when the position is valid, otherwise an `invalid-position` error that names the field.
    public func validationError(now: Int64) -> BrokerError? {
        func invalid(_ message: String) -> BrokerError { BrokerError(.invalidPosition, message) }
        guard lat.isFinite, (-90...90).contains(lat) else { return invalid("lat must be a number from -90 to 90") }
        guard lon.isFinite, (-180...180).contains(lon) else { return invalid("lon must be a number from -180 to 180") }
        if let accuracy, !(accuracy.isFinite && accuracy >= 0) { return invalid("accuracy must be a number of metres, 0 or more") }
        if let speed, !(speed.isFinite && speed >= 0) { return invalid("speed must be a number of metres per second, 0 or more") }
        if let heading, !(heading.isFinite && heading >= 0 && heading < 360) {
            return invalid("heading must be a number of degrees from 0 up to but not including 360")
        }
        guard timestamp > 0 else { return invalid("timestamp must be milliseconds since the Unix epoch") }
        guard timestamp <= now + Self.maximumClockSkewMilliseconds else {
            return invalid("timestamp is more than 60 seconds in the future; check the device clock")
        }
        return nil
    }
}

/// The donor's home as the broker shows it to the donor.
public struct Home: Codable, Sendable, Equatable {
    public var lat: Double
    public var lon: Double
    /// A label for people, such as a street address.
    public var label: String?

    public init(lat: Double, lon: Double, label: String? = nil) {
        self.lat = lat
        self.lon = lon
        self.label = label
    }
}

/// The institution that receives the donation.
public struct Institution: Codable, Sendable, Equatable {
    public var lat: Double
    public var lon: Double
    /// The institution's name.
    public var name: String?

    public init(lat: Double, lon: Double, name: String? = nil) {
        self.lat = lat
        self.lon = lon
        self.name = name
    }
}
