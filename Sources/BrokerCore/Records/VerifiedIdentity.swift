/// A client whose token (or watch link) was accepted: who it is, until when, and what it may watch.
package struct VerifiedIdentity: Sendable, Equatable {
    /// The canonical identity (NFC, ASCII letters lower-cased; see `Identity`); it is also the identity's channel.
    package let identity: String
    /// When the token expires, in seconds since the Unix epoch.
    package let expiresAt: Int64
    /// Set for a watch link: the one donation the connection may watch.
    package var watch: WatchScope? = nil

    package init(identity: String, expiresAt: Int64, watch: WatchScope? = nil) {
        self.identity = identity
        self.expiresAt = expiresAt
        self.watch = watch
    }
}
