// Keys describe themselves without their secret, however they are printed (a log line, `dump`, an error).

extension VAPIDKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String { "VAPIDKey(public: \(publicKeyBase64URL))" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

extension WebhookSigner: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String { "WebhookSigner(***)" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
