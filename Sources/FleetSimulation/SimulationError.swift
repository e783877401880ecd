/// A reason the simulator cannot go on, worded for the person who runs it.
public struct SimulationError: Error, CustomStringConvertible, Equatable, Sendable {
    public let description: String
    /// Whether it is a request the broker did not answer in time (which may be asked again).
    public let isTimeout: Bool

    public init(_ description: String, isTimeout: Bool = false) {
        self.description = description
        self.isTimeout = isTimeout
    }
}
