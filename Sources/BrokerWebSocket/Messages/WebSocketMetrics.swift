import BrokerProtocol

/// What the WebSocket transport counts. The broker's metrics implement it; the transport knows no registry.
/// A class: its existential is a reference and a witness table, which the write path calls without copying a box.
package protocol WebSocketMetrics: AnyObject, Sendable {
    /// A client frame was read: a request, or a frame refused as malformed or against the protocol.
    func frameRead(_ kind: ClientFrameKind)
    /// `count` frames were handed to one socket in one write.
    func framesWritten(_ count: Int)
    /// A client's request was refused with `code`.
    func rejected(_ code: ErrorCode)
}

/// What a client frame was, as the transport counts it.
package enum ClientFrameKind: Sendable {
    case publish, subscribe, unsubscribe
    /// Refused as malformed or against the protocol.
    case invalid
}
