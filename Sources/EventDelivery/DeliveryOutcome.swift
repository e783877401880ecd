/// What one POST came to.
package enum DeliveryOutcome: Sendable, Equatable {
    /// The receiver answered with this HTTP status.
    case status(Int)
    /// No answer: the connection failed, TLS failed, or the time ran out. The text is short, names no URL path
    /// and no payload, and is fit for `last_error`.
    case failed(String)
}
