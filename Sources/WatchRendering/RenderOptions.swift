/// How a screen is drawn.
public struct RenderOptions: Sendable, Equatable {
    /// ASCII only: arrows, dashes and accents are spelled in plain ASCII.
    public var ascii: Bool
    /// ANSI colours and bold; off for NO_COLOR and for golden tests.
    public var colour: Bool

    public init(ascii: Bool = false, colour: Bool = false) {
        self.ascii = ascii
        self.colour = colour
    }
}
