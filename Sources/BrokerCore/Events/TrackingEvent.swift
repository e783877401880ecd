import BrokerProtocol

/// Something that happened to a donation's trip, told to the backend (webhooks) and the donor (Web Push).
///
/// An event says what happened, never where: it holds no coordinate, address or e-mail. The approaching
/// estimate carries the distance rounded to 100 m only.
package struct TrackingEvent: Sendable, Equatable {
    /// What happened.
    package enum Kind: Sendable, Equatable {
        /// The donation became trackable toward `destination` from a state that was not a hand-over pause.
        case started(Destination)
        /// The first fix kept for the donation on its way to `destination`.
        case firstPosition(Destination)
        /// The estimated arrival at `destination` is within the configured minutes.
        case approaching(Destination, etaMinutes: Int, distanceMeters: Int)
        /// A kept fix came within the arrival radius of `destination`.
        case arrived(Destination)
        /// The donation stopped being trackable without ending (the hand-over, or the volunteer dropped it).
        case paused(DonationState)
        /// The hand-over is confirmed: the donation is trackable again, toward `destination`.
        case resumed(Destination)
        /// The donation ended.
        case ended(EndReason)
        /// No fix for `seconds` inside the trackable window.
        case silent(Destination, seconds: Int)
        /// The first fix after ``silent(_:seconds:)``.
        case back(Destination)
    }

    /// Why a donation's tracking ended.
    package enum EndReason: String, Sendable, Equatable {
        case delivered, cancelled, deleted
    }

    package var donation: String
    /// The donation's incarnation ("" for one stored before incarnations existed): an event belongs to one.
    package var incarnation: String
    package var kind: Kind
    /// When the broker decided it, in milliseconds since the Unix epoch.
    package var at: Int64
    /// What makes this event the same one however often and wherever it is decided (a restart, another node):
    /// the outbox keeps one event per identity. `nil` for events told once by their condition instead
    /// (``Kind/silent(_:seconds:)`` and ``Kind/back(_:)``, see ``isSilenceEdge``).
    package var identity: String?
    /// The volunteer's channel, for the broker's own checks (a cluster node asks the store whether another node
    /// heard the volunteer before it reports a silence). Never written into an event, stored or sent.
    package var channel: String?

    package init(donation: String, incarnation: String, kind: Kind, at: Int64, identity: String?, channel: String? = nil) {
        self.donation = donation
        self.incarnation = incarnation
        self.kind = kind
        self.at = at
        self.identity = identity
        self.channel = channel
    }

    /// The type name the webhooks carry (`tracking.approaching`).
    package var type: String {
        switch kind {
        case .started: "tracking.started"
        case .firstPosition: "tracking.first_position"
        case .approaching: "tracking.approaching"
        case .arrived: "tracking.arrived"
        case .paused: "tracking.paused"
        case .resumed: "tracking.resumed"
        case .ended: "tracking.ended"
        case .silent: "tracking.silent"
        case .back: "tracking.back"
        }
    }

    /// Whether this is a silence or its end: these alternate per donation (a `silent` only after a `back` or
    /// none, a `back` only after a `silent`), which the outbox checks when it stores them, so that every node
    /// of a cluster may judge silence and the backend still hears of each silence once.
    package var isSilenceEdge: Bool {
        switch kind {
        case .silent, .back: true
        default: false
        }
    }
}
