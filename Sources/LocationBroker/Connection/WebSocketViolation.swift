import NIOWebSocket

/// A client's frames that break the WebSocket protocol, found by the broker's handlers or by NIO's
/// `NIOWebSocketFrameAggregator`: each closes the connection with its code, the reason in the close frame
/// (docs/PROTOCOL.md §7).
struct WebSocketViolation: Error, Equatable {
    let code: UInt16
    let reason: String

    static let unmasked = Self(.protocolError, "client frames must be masked")
    static let notUTF8 = Self(.dataInconsistentWithMessage, "text message is not valid UTF-8")
    static let unknownOpcode = Self(.protocolError, "unknown opcode")
    static let tooLarge = Self(.messageTooLarge, "message too large")
    static let tooManyFragments = Self(.messageTooLarge, "message in too many fragments")
    static let unexpectedContinuation = Self(.protocolError, "continuation frame with no message to continue")
    static let unfinishedMessage = Self(.protocolError, "new message before the previous one was finished")
    static let fragmentTooSmall = Self(.protocolError, "message fragment too small")

    private init(_ code: WebSocketErrorCode, _ reason: String) {
        self.code = UInt16(webSocketErrorCode: code)
        self.reason = reason
    }

    /// The violation an error reports, if it reports one; other errors (a reset, a TLS failure, NIO's own
    /// frame errors, already answered by its `WebSocketProtocolErrorHandler`) are not.
    init?(_ error: any Error) {
        if let violation = error as? WebSocketViolation {
            self = violation
            return
        }
        guard let error = error as? NIOWebSocketFrameAggregator.Error else { return nil }
        switch error {
        case .accumulatedFrameSizeIsTooLarge: self = .tooLarge
        case .tooManyFragments: self = .tooManyFragments
        case .didReceiveFragmentBeforeReceivingTextOrBinaryFrame: self = .unexpectedContinuation
        case .receivedNewFrameWithoutFinishingPrevious: self = .unfinishedMessage
        // Not raised: the broker sets no minimum fragment size (any size was accepted before the aggregator).
        case .nonFinalFragmentSizeIsTooSmall: self = .fragmentTooSmall
        }
    }
}
