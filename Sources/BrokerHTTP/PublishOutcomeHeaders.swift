import BrokerProtocol
import HTTPTypes

/// What became of a fix taken over HTTP (OwnTracks, PubNub's publish), told in headers: both answer 200 even for
/// a fix kept for nobody, since their apps would send a refused fix again and again.
package enum PublishOutcomeHeaders {
    /// `true` when the fix was kept for a trackable donation, `false` when it was kept for nobody.
    package static let tracking = HTTPField.Name("X-Location-Broker-Tracking")!
    /// Why a fix was kept for nobody: the `reason` of a WebSocket `ack` (`before-window`, `too-old`...).
    package static let untrackedReason = HTTPField.Name("X-Location-Broker-Untracked-Reason")!

    /// Sets both headers on `fields`.
    package static func set(tracking isTracking: Bool, untracked: ServerFrame.UntrackedReason?, on fields: inout HTTPFields) {
        fields[tracking] = isTracking ? "true" : "false"
        if let untracked { fields[untrackedReason] = untracked.rawValue }
    }
}
