import BrokerProtocol
import DeterministicRandom
import Foundation

/// A street-like path: straight legs along a city's grid with a few turns, from a start to an end.
///
/// Pure value: the legs are fixed when the route is made, and ``point(at:)`` answers where a vehicle is after
/// driving some distance along it.
public struct Route: Sendable, Equatable {
    /// The start, each corner, and the end.
    public let waypoints: [GeoPoint]
    /// The length of each leg in metres; `legLengths[i]` joins `waypoints[i]` and `waypoints[i + 1]`.
    public let legLengths: [Double]

    /// The route through `waypoints` in order (at least one point).
    public init(waypoints: [GeoPoint]) {
        var points: [GeoPoint] = []
        for point in waypoints where points.last.map({ $0.distance(to: point) >= 1 }) ?? true {
            points.append(point)
        }
        if points.count == 1, let last = waypoints.last, last != points[0] { points.append(last) }
        self.waypoints = points
        self.legLengths = zip(points, points.dropFirst()).map { $0.distance(to: $1) }
    }

    /// The whole length in metres.
    public var length: Double { legLengths.reduce(0, +) }

    public var start: GeoPoint { waypoints.first ?? GeoPoint(lat: 0, lon: 0) }
    public var end: GeoPoint { waypoints.last ?? start }

    /// Where a vehicle is, and its heading in degrees, after `distance` metres (clamped to the route).
    public func point(at distance: Double) -> (point: GeoPoint, heading: Double) {
        var remaining = max(0, distance)
        for (index, leg) in legLengths.enumerated() {
            let from = waypoints[index], to = waypoints[index + 1]
            let heading = from.bearing(to: to)
            if remaining <= leg || index == legLengths.count - 1 {
                let travelled = min(remaining, leg)
                return (from.moved(bearing: heading, distance: travelled), heading)
            }
            remaining -= leg
        }
        return (end, 0)
    }

    /// The index of the leg a vehicle is on after `distance` metres.
    public func leg(at distance: Double) -> Int {
        var remaining = max(0, distance)
        for (index, leg) in legLengths.enumerated() {
            if remaining <= leg { return index }
            remaining -= leg
        }
        return max(0, legLengths.count - 1)
    }

    /// A Manhattan-style route: the trip is split into legs that follow the two axes of the street grid,
    /// alternating, with 1 to `maximumTurns` turns.
    /// - Parameter gridBearing: the bearing in degrees of the grid's first axis.
    public static func manhattan(
        from start: GeoPoint, to end: GeoPoint, gridBearing: Double = 0, maximumTurns: Int = 4, using rng: inout SeededRandom
    ) -> Route {
        let distance = start.distance(to: end)
        guard distance >= 1 else { return Route(waypoints: [start, end]) }
        let angle = (start.bearing(to: end) - gridBearing) * .pi / 180
        let alongFirst = distance * cos(angle)
        let alongSecond = distance * sin(angle)
        // Legs alternate between the axes; k pieces on the first axis and k or k - 1 on the second.
        let turns = Int.random(in: 1...max(1, maximumTurns), using: &rng)
        let firstPieces = turns / 2 + 1
        let secondPieces = turns + 1 - firstPieces
        let first = split(alongFirst, into: firstPieces, using: &rng)
        let second = split(alongSecond, into: secondPieces, using: &rng)
        var legs: [(bearing: Double, length: Double)] = []
        let startOnFirst = rng.chance(0.5)
        for index in 0..<(firstPieces + secondPieces) {
            let useFirst = (index % 2 == 0) == startOnFirst
            let pieceIndex = index / 2
            if useFirst, pieceIndex < first.count {
                legs.append((gridBearing, first[pieceIndex]))
            } else if !useFirst, pieceIndex < second.count {
                legs.append((gridBearing + 90, second[pieceIndex]))
            }
        }
        // Whatever did not fit the alternation goes last.
        let usedFirst = legs.filter { $0.bearing == gridBearing }.count
        let usedSecond = legs.count - usedFirst
        legs += first.dropFirst(usedFirst).map { (gridBearing, $0) }
        legs += second.dropFirst(usedSecond).map { (gridBearing + 90, $0) }
        var points = [start]
        var here = start
        for leg in legs where abs(leg.length) >= 1 {
            let bearing = leg.length >= 0 ? leg.bearing : leg.bearing + 180
            here = here.moved(bearing: bearing.truncatingRemainder(dividingBy: 360), distance: abs(leg.length))
            points.append(here)
        }
        // The sphere makes the last corner miss the end by a little; end exactly there.
        if points.count > 1 { points[points.count - 1] = end } else { points.append(end) }
        return Route(waypoints: points)
    }

    /// Splits `total` into `count` signed pieces of random sizes that add up to it.
    private static func split(_ total: Double, into count: Int, using rng: inout SeededRandom) -> [Double] {
        guard count > 1 else { return [total] }
        let weights = (0..<count).map { _ in rng.uniform(0.3...1) }
        let sum = weights.reduce(0, +)
        return weights.map { total * $0 / sum }
    }
}
