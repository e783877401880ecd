import Foundation

/// Everything a fleet run needs to know, from the command line of `tracker-sim fleet`.
public struct FleetConfiguration: Sendable {
    /// The broker's WebSocket endpoint (`ws://127.0.0.1:8080/v1/ws`).
    public var webSocketURL: String
    /// The broker's HTTP base address for the backend API (`http://127.0.0.1:8080`).
    public var apiURL: String
    public var backendKey: String
    public var jwtSecret: String
    /// How many volunteers drive at once; each carries one donation at a time.
    public var volunteers: Int
    /// Simulated seconds between a volunteer's fixes (Ponte's app: 20).
    public var interval: Double = 20
    /// How much faster than real time the fleet lives: 10 means 20 simulated seconds pass in 2 real ones.
    public var speedup: Double = 1
    /// Real seconds the run lasts; then every unfinished donation is deleted.
    public var duration: Double = 600
    /// Donations per volunteer; `nil` for as many as fit in ``duration``.
    public var rounds: Int?
    public var seed: UInt64 = 42
    public var area: Area
    /// Drop and restore connections at random, as mobile networks do.
    public var chaos = false
    public var timing = DonationLifecycle.Timing()
    public var profile = MotionModel.Profile.urban
    /// The broker's `arrival_radius_meters`.
    public var arrivalRadius: Double = 150
    /// Tags the run's identities and donation ids, so runs never collide in the broker's database.
    public var runID: String = FleetConfiguration.makeRunID()
    /// Volunteer 1's first donation starts at once and is delivered, so a person can watch it.
    public var showcase = true

    public init(webSocketURL: String, apiURL: String, backendKey: String, jwtSecret: String, volunteers: Int, area: Area) {
        self.webSocketURL = webSocketURL
        self.apiURL = apiURL
        self.backendKey = backendKey
        self.jwtSecret = jwtSecret
        self.volunteers = volunteers
        self.area = area
    }

    /// Real seconds between a volunteer's fixes (never below 10 ms).
    public var realInterval: Double { max(0.01, interval / speedup) }

    /// Real seconds for `simulated` seconds of the fleet's time.
    public func real(_ simulated: Double) -> Double { simulated / speedup }

    /// Publishes per second each volunteer needs from the broker's rate limit.
    public var neededPublishRate: Double { 1 / realInterval }

    /// The `LOCATION_BROKER_PUBLISH_RATE` and `_BURST` values a broker needs for this run.
    public var brokerRateSettings: (rate: Int, burst: Int) {
        let rate = Int((neededPublishRate * 2).rounded(.up))
        return (max(2, rate), max(10, rate * 2))
    }

    public static func makeRunID() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(UInt32.random(in: 0x10_0000...0xFF_FFFF, using: &generator), radix: 16)
    }

    /// The identity of volunteer `index` (1-based in names).
    public func volunteerIdentity(_ index: Int) -> String { "volunteer-\(index + 1)@fleet-\(runID).example" }
    /// The identity of the donor of a volunteer's `round`-th donation.
    public func donorIdentity(_ index: Int, round: Int) -> String { "donor-\(index + 1)-\(round)@fleet-\(runID).example" }
    /// The id of a volunteer's `round`-th donation.
    public func donationID(_ index: Int, round: Int) -> String { "fleet-\(runID)-\(index + 1)-\(round)" }

    /// What is wrong with the settings, or `nil`.
    public var problem: String? {
        if volunteers < 1 || volunteers > 5_000 { return "--volunteers must be from 1 to 5000" }
        if !(interval >= 1 && interval <= 3600) { return "--interval must be from 1 s to 1 h" }
        if !(speedup >= 0.1 && speedup <= 1000) { return "--speedup must be from 0.1 to 1000" }
        if !(duration > 0 && duration <= 24 * 3600) { return "--duration must be at most 24 h" }
        if let rounds, rounds < 1 { return "--rounds must be 1 or more" }
        return nil
    }
}
