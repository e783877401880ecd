import BrokerProtocol
import TrackingRules

/// A channel's state for deciding trip events, under its shard lock. Kept beside the gates, not in them: it
/// changes with every fix, and a gate's change drops the publish path's caches.
final class TripState {
    /// What the events of each gated donation have told on this node.
    var progress: [String: TripProgress] = [:]
    /// The volunteer's smoothed speed, for the `approaching` estimate, and the fix it was last sampled from.
    var speed = SpeedSmoother()
    var previousFix: Position?
}
