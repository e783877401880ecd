/// What the events of one donation's current leg have told so far on this node, kept in its gate.
struct TripProgress: Equatable {
    /// A fix was kept for the donation on this leg.
    var sawFirstPosition = false
    /// `approaching` was decided on this leg.
    var approached = false
    /// When this node last kept a fix for the donation (milliseconds, the hub's clock); silence is measured from
    /// it, or from the window's opening before the first fix.
    var lastFixAt: Int64?
    /// This node judged the volunteer silent and has seen no fix since.
    var silent = false
}
