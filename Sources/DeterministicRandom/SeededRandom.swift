import Foundation

/// A small, fast, deterministic random number generator (SplitMix64), so that `--seed 42` replays the same fleet
/// and a test's random inputs are the same on every run. The one seeded generator of the package: the simulator,
/// the load benchmark and every test use it.
///
/// SplitMix64 passes BigCrush and needs one `UInt64` of state, which makes it cheap to fork: every volunteer gets
/// its own generator derived from the run's seed, and the order in which volunteers run cannot change what each
/// of them does.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator that starts from `seed`; equal seeds give equal sequences.
    public init(seed: UInt64) {
        self.state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An independent generator for the sub-stream `stream` (a volunteer's index, say), leaving this one untouched.
    public func fork(_ stream: UInt64) -> SeededRandom {
        var mixer = SeededRandom(seed: state ^ (stream &* 0xD1B5_4A32_D192_ED03))
        return SeededRandom(seed: mixer.next())
    }

    /// A uniform double in `range`.
    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        Double.random(in: range, using: &self)
    }

    /// `true` with probability `probability` (0 to 1).
    public mutating func chance(_ probability: Double) -> Bool {
        uniform(0...1) < probability
    }

    /// A normally distributed double (Box-Muller), for GPS noise.
    public mutating func normal(mean: Double = 0, deviation: Double = 1) -> Double {
        let u1 = max(uniform(0...1), .leastNonzeroMagnitude)
        let u2 = uniform(0...1)
        return mean + deviation * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }

    /// One element of a non-empty array, or `nil` when it is empty.
    public mutating func pick<T>(_ elements: [T]) -> T? {
        elements.isEmpty ? nil : elements[Int.random(in: 0..<elements.count, using: &self)]
    }
}
