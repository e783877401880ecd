import NIOWebSocket

/// A client's frames that break the WebSocket protocol, found by the broker's connection handler (its
/// ``ClientFrameAssembler`` for masking and fragments): each closes the connection with its code, the reason in the close frame
/// (docs/PROTOCOL.md §7).
package struct WebSocketViolation: Error, Equatable {
    let code: UInt16
    let reason: String

    static let unmasked = Self(.protocolError, "client frames must be masked")
    static let notUTF8 = Self(.dataInconsistentWithMessage, "text message is not valid UTF-8")
    static let unknownOpcode = Self(.protocolError, "unknown opcode")
    static let tooLarge = Self(.messageTooLarge, "message too large")
    static let tooManyFragments = Self(.messageTooLarge, "message in too many fragments")
    static let unexpectedContinuation = Self(.protocolError, "continuation frame with no message to continue")
    static let unfinishedMessage = Self(.protocolError, "new message before the previous one was finished")

    /// The close code for a frame that breaks the frame rules (``ClientFrameHeader``), as NIO's
    /// `WebSocketProtocolErrorHandler` answers its decoder's errors (NIO's own mapping is internal to it).
    static func closeCode(for error: NIOWebSocketError) -> WebSocketErrorCode {
        switch error {
        case .invalidFrameLength: .messageTooLarge
        case .fragmentedControlFrame, .multiByteControlFrameLength: .protocolError
        @unknown default: .protocolError
        }
    }

    private init(_ code: WebSocketErrorCode, _ reason: String) {
        self.code = UInt16(webSocketErrorCode: code)
        self.reason = reason
    }
}
