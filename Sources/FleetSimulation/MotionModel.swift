import BrokerProtocol
import DeterministicRandom
import Foundation

/// How a volunteer's vehicle moves along a ``Route``, and what their phone's GPS reports about it.
///
/// Pure: the speeds of each leg and the stops at each corner are drawn once, when the model is made; then
/// ``truth(at:)`` gives the true place at any elapsed time and ``fix(at:timestamp:using:)`` adds GPS noise.
public struct MotionModel: Sendable, Equatable {
    /// Speeds and GPS quality.
    public struct Profile: Sendable, Equatable {
        /// Cruising speed on a leg, in km/h (urban traffic: 20 to 40).
        public var cruiseKilometresPerHour: ClosedRange<Double>
        /// Time stopped at each corner (traffic lights, turning), in seconds.
        public var cornerStopSeconds: ClosedRange<Double>
        /// The horizontal accuracy the phone reports, in metres.
        public var accuracyMetres: ClosedRange<Double>

        public init(
            cruiseKilometresPerHour: ClosedRange<Double> = 20...40, cornerStopSeconds: ClosedRange<Double> = 0...25,
            accuracyMetres: ClosedRange<Double> = 4...14
        ) {
            self.cruiseKilometresPerHour = cruiseKilometresPerHour
            self.cornerStopSeconds = cornerStopSeconds
            self.accuracyMetres = accuracyMetres
        }

        public static let urban = Profile()
    }

    /// Where the vehicle truly is at some moment.
    public struct State: Sendable, Equatable {
        public var point: GeoPoint
        /// Degrees, [0, 360).
        public var heading: Double
        /// Metres per second.
        public var speed: Double
        /// Metres driven so far.
        public var distance: Double

        public init(point: GeoPoint, heading: Double, speed: Double, distance: Double) {
            self.point = point
            self.heading = heading
            self.speed = speed
            self.distance = distance
        }
    }

    private struct Segment: Sendable, Equatable {
        /// Seconds from the start at which the segment begins.
        var startTime: Double
        var duration: Double
        /// Metres driven at the start of the segment.
        var startDistance: Double
        /// Metres per second; 0 for a stop at a corner.
        var speed: Double
    }

    public let route: Route
    public let profile: Profile
    private let segments: [Segment]

    /// A drive along `route` with speeds and stops drawn from `profile`.
    public init(route: Route, profile: Profile = .urban, using rng: inout SeededRandom) {
        self.route = route
        self.profile = profile
        var segments: [Segment] = []
        var time = 0.0, distance = 0.0
        for (index, length) in route.legLengths.enumerated() {
            if index > 0 {
                let stop = rng.uniform(profile.cornerStopSeconds)
                if stop > 0 {
                    segments.append(Segment(startTime: time, duration: stop, startDistance: distance, speed: 0))
                    time += stop
                }
            }
            let speed = rng.uniform(profile.cruiseKilometresPerHour) / 3.6
            let duration = speed > 0 ? length / speed : 0
            segments.append(Segment(startTime: time, duration: duration, startDistance: distance, speed: speed))
            time += duration
            distance += length
        }
        self.segments = segments
    }

    /// Seconds from the start to the end of the route.
    public var duration: Double { segments.last.map { $0.startTime + $0.duration } ?? 0 }

    /// The true state after `elapsed` seconds (clamped to the drive).
    public func truth(at elapsed: Double) -> State {
        let time = min(max(0, elapsed), duration)
        guard let segment = segments.last(where: { $0.startTime <= time }) else {
            let (point, heading) = route.point(at: 0)
            return State(point: point, heading: heading, speed: 0, distance: 0)
        }
        let distance = segment.startDistance + segment.speed * (time - segment.startTime)
        let (point, heading) = route.point(at: distance)
        let moving = time < duration && segment.speed > 0
        return State(point: point, heading: heading, speed: moving ? segment.speed : 0, distance: distance)
    }

    /// What the phone reports after `elapsed` seconds: the true place with GPS noise, an accuracy, speed and heading.
    public func fix(at elapsed: Double, timestamp: Int64, using rng: inout SeededRandom) -> Position {
        Self.fix(of: truth(at: elapsed), profile: profile, timestamp: timestamp, using: &rng)
    }

    /// A noisy fix of `state`: the error is Gaussian, about half the reported accuracy on each axis.
    public static func fix(of state: State, profile: Profile = .urban, timestamp: Int64, using rng: inout SeededRandom) -> Position {
        let accuracy = rng.uniform(profile.accuracyMetres)
        let east = rng.normal(deviation: accuracy / 2), north = rng.normal(deviation: accuracy / 2)
        let noisy = state.point.moved(bearing: 0, distance: north).moved(bearing: 90, distance: east)
        let speed = state.speed > 0 ? max(0, state.speed + rng.normal(deviation: 0.3)) : 0
        var heading: Double?
        if state.speed > 0 {
            let rounded = state.heading.rounded()
            heading = rounded >= 360 ? 0 : rounded
        }
        return Position(
            lat: (noisy.lat * 1e6).rounded() / 1e6, lon: (noisy.lon * 1e6).rounded() / 1e6,
            accuracy: (accuracy * 10).rounded() / 10, speed: (speed * 10).rounded() / 10, heading: heading,
            timestamp: timestamp)
    }
}
