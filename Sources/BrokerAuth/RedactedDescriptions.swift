// The HS256 secret never prints, however the rules or the verifier are printed (a log line, `dump`, an error).

extension TokenVerifier.Rules: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String {
        "Rules(secret: \(secret == nil ? "none" : "***"), identityClaim: \(identityClaim), audience: \(audience ?? "none"), issuer: \(issuer ?? "none"))"
    }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["description": description], displayStyle: .struct) }
}

extension TokenVerifier: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String { "TokenVerifier(***)" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
