/// A reason the simulator cannot go on, worded for the person who runs it.
public struct SimulationError: Error, CustomStringConvertible, Equatable, Sendable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
