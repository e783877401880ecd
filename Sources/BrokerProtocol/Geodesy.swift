import Foundation

/// Great-circle helpers on a spherical Earth, good to a few metres at city scale.
public enum Geodesy {
    /// Mean Earth radius in metres (IUGG).
    public static let earthRadius = 6_371_008.8

    /// Haversine distance in metres between two points given in degrees.
    public static func distance(fromLat lat1: Double, lon lon1: Double, toLat lat2: Double, lon lon2: Double) -> Double {
        let phi1 = lat1 * .pi / 180, phi2 = lat2 * .pi / 180
        let dPhi = (lat2 - lat1) * .pi / 180
        let dLambda = (lon2 - lon1) * .pi / 180
        let a = sin(dPhi / 2) * sin(dPhi / 2) + cos(phi1) * cos(phi2) * sin(dLambda / 2) * sin(dLambda / 2)
        return 2 * earthRadius * atan2(a.squareRoot(), (1 - a).squareRoot())
    }

    /// Initial bearing in degrees, [0, 360), from the first point towards the second; 0 is north, 90 east.
    public static func bearing(fromLat lat1: Double, lon lon1: Double, toLat lat2: Double, lon lon2: Double) -> Double {
        let phi1 = lat1 * .pi / 180, phi2 = lat2 * .pi / 180
        let dLambda = (lon2 - lon1) * .pi / 180
        let y = sin(dLambda) * cos(phi2)
        let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLambda)
        let degrees = atan2(y, x) * 180 / .pi
        let normalised = degrees.truncatingRemainder(dividingBy: 360)
        return normalised < 0 ? normalised + 360 : normalised
    }

    /// The point reached from a start point after `distance` metres along `bearing` degrees.
    public static func destination(fromLat lat: Double, lon: Double, bearing: Double, distance: Double) -> (lat: Double, lon: Double) {
        let delta = distance / earthRadius
        let theta = bearing * .pi / 180
        let phi1 = lat * .pi / 180, lambda1 = lon * .pi / 180
        let phi2 = asin(sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(theta))
        let lambda2 = lambda1 + atan2(sin(theta) * sin(delta) * cos(phi1), cos(delta) - sin(phi1) * sin(phi2))
        var lon2 = lambda2 * 180 / .pi
        lon2 = (lon2 + 540).truncatingRemainder(dividingBy: 360) - 180
        return (phi2 * 180 / .pi, lon2)
    }
}
