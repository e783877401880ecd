import BrokerProtocol

/// An exponential moving average of the volunteer's ground speed, and the arrival estimate it gives.
///
/// Phones report speed noisily (0 at a red light, bursts after a tunnel); the average keeps the ETA from jumping.
public struct SpeedSmoother: Sendable, Equatable {
    /// How much a new sample counts (``DonorViewRules/speedWeight``, shared with the tracking page).
    public static let defaultWeight = DonorViewRules.speedWeight
    /// Below this the volunteer is taken as standing still and no ETA is given (``DonorViewRules/minimumMovingSpeed``).
    public static let minimumMovingSpeed = DonorViewRules.minimumMovingSpeed
    /// Above this a sample is taken as a GPS jump and ignored (``DonorViewRules/maximumPlausibleSpeed``).
    public static let maximumPlausibleSpeed = DonorViewRules.maximumPlausibleSpeed
    /// Fixes closer in time than this give no sample (``DonorViewRules/minimumSampleGapMilliseconds``).
    public static let minimumSampleGapMilliseconds = DonorViewRules.minimumSampleGapMilliseconds
    /// Fixes further apart than this say nothing about the current speed (``DonorViewRules/maximumSampleGapMilliseconds``).
    public static let maximumSampleGapMilliseconds = DonorViewRules.maximumSampleGapMilliseconds

    /// The smoothed speed in metres per second; `nil` before the first sample.
    public private(set) var value: Double?
    public let weight: Double

    public init(weight: Double = defaultWeight) {
        self.weight = weight
    }

    /// Adds one speed sample in metres per second; samples that are not plausible speeds are ignored.
    public mutating func add(_ sample: Double) {
        guard sample.isFinite, sample >= 0, sample <= Self.maximumPlausibleSpeed else { return }
        if let value {
            self.value = weight * sample + (1 - weight) * value
        } else {
            value = sample
        }
    }

    /// The speed a fix tells: the one the phone reported, else distance over time since the previous fix.
    public static func sample(from previous: Position?, to current: Position) -> Double? {
        if let reported = current.speed, reported.isFinite, reported >= 0 { return reported }
        guard let previous else { return nil }
        let gap = current.timestamp - previous.timestamp
        guard gap >= minimumSampleGapMilliseconds, gap <= maximumSampleGapMilliseconds else { return nil }
        let metres = Geodesy.distance(fromLat: previous.lat, lon: previous.lon, toLat: current.lat, lon: current.lon)
        return metres / (Double(gap) / 1000)
    }

    /// Seconds to cover `distance` metres at the smoothed speed; `nil` when the speed is unknown or about zero.
    public func eta(distance: Double) -> Double? {
        guard let value, value >= Self.minimumMovingSpeed, distance.isFinite, distance >= 0 else { return nil }
        return distance / value
    }
}
