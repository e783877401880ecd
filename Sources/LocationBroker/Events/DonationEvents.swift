import BrokerStorage

/// What the donations API needs to write the trip events a donation change causes.
struct DonationEvents: Sendable {
    /// Holds the position events not yet stored; a change waits for them.
    let recorder: EventRecorder
    let outbox: any EventOutbox
    /// This node's name.
    let node: String
    let webhooks: Bool
    let pushes: Bool
    /// Wakes the dispatcher after a change stored events.
    let onStored: @Sendable () -> Void
}
