import BrokerProtocol

/// A point on the map in degrees.
public struct GeoPoint: Codable, Sendable, Equatable {
    public var lat: Double
    public var lon: Double

    public init(lat: Double, lon: Double) {
        self.lat = lat
        self.lon = lon
    }

    /// Great-circle distance in metres.
    public func distance(to other: GeoPoint) -> Double {
        Geodesy.distance(fromLat: lat, lon: lon, toLat: other.lat, lon: other.lon)
    }

    /// Initial bearing in degrees towards `other`, [0, 360).
    public func bearing(to other: GeoPoint) -> Double {
        Geodesy.bearing(fromLat: lat, lon: lon, toLat: other.lat, lon: other.lon)
    }

    /// The point `distance` metres away along `bearing` degrees.
    public func moved(bearing: Double, distance: Double) -> GeoPoint {
        let point = Geodesy.destination(fromLat: lat, lon: lon, bearing: bearing, distance: distance)
        return GeoPoint(lat: point.lat, lon: point.lon)
    }
}
