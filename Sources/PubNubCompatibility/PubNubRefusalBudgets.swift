import NIOCore

/// The refusal budgets the PubNub endpoints share with the WebSocket upgrade: refusals charged to the source
/// address before a token is trusted, and to a verified identity after. Given as functions, so that this
/// target does not depend on the WebSocket transport that owns them.
package struct PubNubRefusalBudgets: Sendable {
    /// Whether the address is past its budget (then no token is verified for it).
    package var addressExhausted: @Sendable (SocketAddress) -> Bool
    /// Charges one refusal to the address.
    package var chargeAddress: @Sendable (SocketAddress) -> Void
    /// Whether the identity is past its budget (then it is answered 429 and nothing is looked up).
    package var identityExhausted: @Sendable (String) -> Bool
    /// Charges one refusal to the identity.
    package var chargeIdentity: @Sendable (String) -> Void
    /// Seconds until one refusal of a budget is forgotten, for the 429's message.
    package var secondsPerRefusal: Int

    package init(
        addressExhausted: @escaping @Sendable (SocketAddress) -> Bool, chargeAddress: @escaping @Sendable (SocketAddress) -> Void,
        identityExhausted: @escaping @Sendable (String) -> Bool, chargeIdentity: @escaping @Sendable (String) -> Void, secondsPerRefusal: Int
    ) {
        self.addressExhausted = addressExhausted
        self.chargeAddress = chargeAddress
        self.identityExhausted = identityExhausted
        self.chargeIdentity = chargeIdentity
        self.secondsPerRefusal = secondsPerRefusal
    }
}
