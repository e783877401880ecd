/// Where the hub hands the events it decides. Called under a channel's shard lock, on the publish path and
/// the sweeper's: it must only take the events and return (queue them for a writer), never wait.
package protocol TrackingEventSink: AnyObject, Sendable {
    func record(_ event: TrackingEvent)
}

/// The rules the hub decides events by, and where it hands them.
package struct TrackingEventRules: Sendable {
    package let sink: any TrackingEventSink
    /// An estimated arrival within this many seconds is `approaching`.
    package var approachingSeconds: Double
    /// This long without a fix inside a trackable window is `silent`.
    package var silentAfterMilliseconds: Int64

    package init(sink: any TrackingEventSink, approachingMinutes: Int, silentAfterSeconds: Int) {
        self.sink = sink
        self.approachingSeconds = Double(approachingMinutes) * 60
        self.silentAfterMilliseconds = Int64(silentAfterSeconds) * 1000
    }
}
