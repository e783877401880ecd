import BrokerCore
import BrokerProtocol
import HTTPTypes

/// Why an upgrade request was refused: the status and the error of the answer's JSON body.
package struct UpgradeRefusal: Error, Equatable, Sendable {
    package let status: HTTPResponse.Status
    package let error: BrokerError

    package init(status: HTTPResponse.Status, error: BrokerError) {
        self.status = status
        self.error = error
    }
}

/// Whether an upgrade request may become a WebSocket, decided on the socket's event loop. A refusal carries its
/// reason to the answer: the token is judged once (a forged token is the cheapest thing to send, and a second
/// check could also see another broker, one connection later, than the one that decided).
package enum UpgradeDecision: Sendable {
    /// Decided without suspending.
    case now(Result<VerifiedIdentity, UpgradeRefusal>)
    /// Decided by a check that suspends (a watch link's reads the store); the socket waits on its event loop.
    case later(@Sendable () async -> Result<VerifiedIdentity, UpgradeRefusal>)
}
