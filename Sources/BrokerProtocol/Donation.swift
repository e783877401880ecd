/// A donation as the backend sends it (`PUT /v1/donations/{id}`) and as the broker returns it.
public struct Donation: Codable, Sendable, Equatable {
    /// The donation's id; set from the URL, not the body.
    public var id: String
    /// The donor's identity (e-mail), in canonical form (`Identity.canonicalize`: NFC, ASCII letters lower-cased).
    public var donor: String
    /// The volunteer's identity (e-mail), in canonical form; `nil` while none is assigned.
    public var volunteer: String?
    public var state: DonationState
    public var home: Home
    /// Required from `BEING-LOOKED-FOR` on; a free offer may not have one yet while `CREATED`.
    public var institution: Institution?
    /// When the broker first stored the donation, in milliseconds since the Unix epoch.
    public var createdAt: Int64
    /// When the broker last changed the donation, in milliseconds since the Unix epoch.
    public var updatedAt: Int64
    /// A random value the broker gives a donation when it is created, and never changes; a donation deleted and
    /// created again under the same id gets a new one. Watch links name it, so that a link dies with the
    /// donation it was made for. `nil` only in records written before it existed.
    public var incarnation: String?

    public init(
        id: String, donor: String, volunteer: String?, state: DonationState, home: Home, institution: Institution?,
        createdAt: Int64, updatedAt: Int64, incarnation: String? = nil
    ) {
        self.id = id
        self.donor = donor
        self.volunteer = volunteer
        self.state = state
        self.home = home
        self.institution = institution
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.incarnation = incarnation
    }

    /// The stage the state machine looks at.
    public var stage: DonationTransition.Stage { .init(state, volunteer: volunteer) }
}

/// The body of `PUT /v1/donations/{id}`.
public struct DonationUpdate: Codable, Sendable, Equatable {
    public var donor: String
    public var volunteer: String?
    public var state: DonationState
    public var home: Home
    public var institution: Institution?

    public init(donor: String, volunteer: String?, state: DonationState, home: Home, institution: Institution?) {
        self.donor = donor
        self.volunteer = volunteer
        self.state = state
        self.home = home
        self.institution = institution
    }
}
