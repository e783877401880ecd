import BrokerProtocol

/// A change that the store made durable.
package struct DonationChange: Sendable, Equatable {
    package let id: String
    /// Higher than every revision the store handed out before.
    package let revision: Int64
    package let old: Donation?
    /// `nil` when the donation was deleted.
    package let new: Donation?

    package init(id: String, revision: Int64, old: Donation?, new: Donation?) {
        self.id = id
        self.revision = revision
        self.old = old
        self.new = new
    }
}

/// The active donations and the revision they were read at.
package struct StoreSnapshot: Sendable {
    package let donations: [Donation]
    package let revision: Int64

    package init(donations: [Donation], revision: Int64) {
        self.donations = donations
        self.revision = revision
    }
}

/// A channel's newest kept position as the cluster stored it.
package struct LastPosition: Sendable, Equatable {
    package let channel: String
    package let seq: Int64
    package let position: Position
    package let donations: [String]
    /// The seq of the position in each donation's view (``ViewCounter``), in the order of `donations`; `nil` when
    /// it was stored without them, for the node that takes it in to number.
    package let viewSeqs: [Int64]?
    package let seenAt: Int64

    package init(channel: String, seq: Int64, position: Position, donations: [String], viewSeqs: [Int64]?, seenAt: Int64) {
        self.channel = channel
        self.seq = seq
        self.position = position
        self.donations = donations
        self.viewSeqs = viewSeqs
        self.seenAt = seenAt
    }

    /// How long a kept position stays worth taking in from the cluster (the stored rows and the bus), in seconds.
    package static let retentionSeconds = 600
}

/// Clock skew tolerated on a token's `exp` and `nbf`, in seconds: a connection lives exactly as long as its
/// token is accepted.
package enum TokenLeeway {
    package static let seconds: Int64 = 30
}
