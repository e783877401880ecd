import BrokerProtocol
import DeterministicRandom
import Foundation
import Yams

/// A city the fleet drives in: where donors live, which institutions receive donations, and how the streets run.
///
/// Read from a YAML file in `config/areas/` (see `buenos-aires.yaml`):
///
/// ```yaml
/// name: Buenos Aires
/// bounds: {south: -34.640, west: -58.480, north: -34.580, east: -58.390}
/// grid_bearing: 0
/// institutions:
///   - {name: Cruz Roja Argentina, lat: -34.6106, lon: -58.3955}
/// streets: [Av. Corrientes, Humahuaca]
/// ```
public struct Area: Codable, Sendable, Equatable {
    /// A box in degrees; homes and volunteers' starting points are drawn inside it.
    public struct Bounds: Codable, Sendable, Equatable {
        public var south: Double
        public var west: Double
        public var north: Double
        public var east: Double

        public init(south: Double, west: Double, north: Double, east: Double) {
            self.south = south
            self.west = west
            self.north = north
            self.east = east
        }

        /// Whether `point` lies inside the box.
        public func contains(_ point: GeoPoint) -> Bool {
            (south...north).contains(point.lat) && (west...east).contains(point.lon)
        }
    }

    /// An institution that receives donations.
    public struct Place: Codable, Sendable, Equatable {
        public var name: String
        public var lat: Double
        public var lon: Double
        /// A street address, for people reading the file.
        public var address: String?

        public init(name: String, lat: Double, lon: Double, address: String? = nil) {
            self.name = name
            self.lat = lat
            self.lon = lon
            self.address = address
        }

        public var point: GeoPoint { GeoPoint(lat: lat, lon: lon) }
    }

    public var name: String
    public var bounds: Bounds
    public var institutions: [Place]
    /// Street names used to label donors' homes ("Humahuaca 3910"); optional.
    public var streets: [String]?
    /// The bearing in degrees of the street grid's first axis (0: streets run north-south and east-west).
    public var gridBearing: Double?

    private enum CodingKeys: String, CodingKey {
        case name, bounds, institutions, streets
        case gridBearing = "grid_bearing"
    }

    public init(name: String, bounds: Bounds, institutions: [Place], streets: [String]? = nil, gridBearing: Double? = nil) {
        self.name = name
        self.bounds = bounds
        self.institutions = institutions
        self.streets = streets
        self.gridBearing = gridBearing
    }

    /// Reads and checks an area file.
    /// - Throws: ``SimulationError`` naming the file and what is wrong with it.
    public static func load(path: String) throws -> Area {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw SimulationError("cannot read the area file \(path): \(error.localizedDescription)")
        }
        return try parse(text, source: path)
    }

    /// Parses and checks the YAML text of an area.
    public static func parse(_ yaml: String, source: String = "the area") throws -> Area {
        let area: Area
        do {
            area = try YAMLDecoder().decode(Area.self, from: yaml)
        } catch {
            throw SimulationError("\(source) is not a valid area file: \(error)")
        }
        if let problem = area.problem { throw SimulationError("\(source): \(problem)") }
        return area
    }

    /// What makes the area unusable, or `nil` when it is fine.
    public var problem: String? {
        let b = bounds
        guard [b.south, b.north, b.west, b.east].allSatisfy(\.isFinite), (-90...90).contains(b.south), (-90...90).contains(b.north),
            (-180...180).contains(b.west), (-180...180).contains(b.east)
        else { return "bounds must be latitudes from -90 to 90 and longitudes from -180 to 180" }
        guard b.south < b.north, b.west < b.east else { return "bounds need south < north and west < east" }
        let diagonal = GeoPoint(lat: b.south, lon: b.west).distance(to: GeoPoint(lat: b.north, lon: b.east))
        guard diagonal >= 2_000, diagonal <= 200_000 else { return "bounds must be a city: 2 km to 200 km corner to corner" }
        guard !institutions.isEmpty else { return "institutions must name at least one place" }
        for place in institutions {
            guard !place.name.isEmpty, place.name.count <= DonationUpdate.maximumTextLength else {
                return "institution names must be 1 to \(DonationUpdate.maximumTextLength) characters"
            }
            guard place.lat.isFinite, place.lon.isFinite, (-90...90).contains(place.lat), (-180...180).contains(place.lon) else {
                return "institution \(place.name) has coordinates out of range"
            }
        }
        if let gridBearing, !gridBearing.isFinite { return "grid_bearing must be a number of degrees" }
        return nil
    }

    /// A random point inside the bounds.
    public func randomPoint(using rng: inout SeededRandom) -> GeoPoint {
        GeoPoint(lat: rng.uniform(bounds.south...bounds.north), lon: rng.uniform(bounds.west...bounds.east))
    }

    /// A label for a home, such as "Humahuaca 3910".
    public func homeLabel(using rng: inout SeededRandom) -> String {
        let street = rng.pick(streets ?? []) ?? "Calle"
        return "\(street) \(Int.random(in: 1...60, using: &rng) * 100 + Int.random(in: 0...99, using: &rng))"
    }

    /// A random institution at least `minimumDistance` metres from `home`, or the farthest one when none is.
    public func institution(awayFrom home: GeoPoint, minimumDistance: Double, using rng: inout SeededRandom) -> Place {
        let far = institutions.filter { $0.point.distance(to: home) >= minimumDistance }
        if let place = rng.pick(far) { return place }
        return institutions.max { $0.point.distance(to: home) < $1.point.distance(to: home) }
            ?? Place(name: name, lat: (bounds.south + bounds.north) / 2, lon: (bounds.west + bounds.east) / 2)
    }

    /// A point `minimum` to `maximum` metres from `origin`, inside the bounds when possible.
    public func point(near origin: GeoPoint, minimum: Double, maximum: Double, using rng: inout SeededRandom) -> GeoPoint {
        var candidate = origin
        for _ in 0..<16 {
            candidate = origin.moved(bearing: rng.uniform(0...359.999), distance: rng.uniform(minimum...max(minimum, maximum)))
            if bounds.contains(candidate) { return candidate }
        }
        return candidate
    }
}
