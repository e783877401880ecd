import BrokerProtocol
import Foundation

#if canImport(CoreLocation)
import CoreLocation
#endif

extension Position {
    /// A fix from Core Location-style values, where a negative accuracy, speed or course means "invalid": those
    /// become absent instead of a fix the broker refuses (`invalid-position`). A course of 360 or more is taken
    /// modulo 360; a value that is not finite is absent too.
    /// - Parameters:
    ///   - horizontalAccuracy: metres; negative: the fix's position is invalid, but it is still sent (the app
    ///     decides whether to hand such fixes over).
    ///   - speed: metres per second.
    ///   - course: degrees from north.
    ///   - timestamp: when the fix was taken.
    public init(latitude: Double, longitude: Double, horizontalAccuracy: Double, speed: Double, course: Double, timestamp: Date) {
        self.init(
            lat: latitude, lon: longitude, accuracy: Self.valid(horizontalAccuracy), speed: Self.valid(speed),
            heading: Self.valid(course).map { $0.truncatingRemainder(dividingBy: 360) },
            timestamp: Int64((timestamp.timeIntervalSince1970 * 1000).rounded()))
    }

    /// A Core Location measurement: `nil` when it says "invalid" (negative) or is not a number.
    private static func valid(_ value: Double) -> Double? {
        value.isFinite && value >= 0 ? value : nil
    }
}

#if canImport(CoreLocation)
extension Position {
    /// A fix from a `CLLocation`, with its invalid (negative) accuracy, speed and course left out.
    public init(_ location: CLLocation) {
        self.init(
            latitude: location.coordinate.latitude, longitude: location.coordinate.longitude,
            horizontalAccuracy: location.horizontalAccuracy, speed: location.speed, course: location.course, timestamp: location.timestamp)
    }
}
#endif
