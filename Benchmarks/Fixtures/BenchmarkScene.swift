import BrokerCore
import BrokerProtocol
import BrokerWebSocket
import LocationBroker

/// What the benchmark fixtures share: a hub with one volunteer carrying one donation per donor, all
/// `BEING-LOOKED-FOR`, and the position the volunteer publishes. Exists only for the benchmark fixtures.
///
/// The publish limit and the maximum age of a fix are raised so that neither refuses a benchmark's publish, the
/// position is stamped when the scene is made (after the donations' trackable windows opened, so it is kept for
/// them), and it stays far from every destination, so no arrival fires.
struct BenchmarkScene: Sendable {
    /// The volunteer every donor watches.
    static let volunteer = "volunteer@example.org"

    let hub: Hub
    let position: Position

    init(donors: Int, metrics: BrokerMetrics = BrokerMetrics()) {
        var settings = HubSettings(BrokerConfiguration.defaults)
        settings.publishRate = 1_000_000_000
        settings.publishBurst = 1_000_000_000
        // A fixed timestamp would be older than the maximum age, and earlier than the windows opened below.
        settings.maxPositionAgeMilliseconds = .max / 4
        hub = Hub(settings: settings, metrics: metrics, framing: TextFrame.framing)
        let home = Home(lat: -34.6037, lon: -58.3816, label: "Av. Corrientes 1234")
        let institution = Institution(lat: -34.5875, lon: -58.4206, name: "Caritas Palermo")
        for index in 0..<donors {
            let id = Self.donation(index)
            hub.apply(
                DonationChange(
                    id: id, revision: Int64(index + 1), old: nil,
                    new: Donation(
                        id: id, donor: Self.donor(index), volunteer: Self.volunteer, state: .beingLookedFor, home: home,
                        institution: institution, createdAt: 0, updatedAt: 0)))
        }
        position = Position(lat: -34.6200, lon: -58.4400, accuracy: 5, speed: 8.5, heading: 270, timestamp: WallClock.system.now())
    }

    /// The identity of donor `index`.
    static func donor(_ index: Int) -> String { "donor-\(index)@example.org" }

    /// The donation donor `index` gave.
    static func donation(_ index: Int) -> String { "d-\(index)" }
}
