/// The load scenarios of `tracker-sim bench`, each described in docs/BENCHMARKS.md.
public enum BenchScenario: String, Codable, Sendable, CaseIterable {
    /// N donors subscribed and idle: what a held connection costs the broker.
    case idle
    /// P volunteer/donor pairs publishing at a total rate: latency, throughput, losses.
    case pairs
    /// One channel, S watchers, M positions: the fan-out path.
    case fanout
    /// Volunteer/donor pairs at the real 20-second cadence, driving street-like routes, at scale.
    case fleet
    /// A storm of N new connections with token verification: connections per second.
    case connect

    /// Donations a volunteer carries at once in this scenario, for the donor of donation `index`.
    public func volunteer(forDonation index: Int) -> Int {
        switch self {
        case .idle: index / 10
        case .fanout: 0
        case .pairs, .fleet, .connect: index
        }
    }

    /// How many subscribers see each published position.
    public func watchersPerChannel(subscribers: Int) -> Int {
        switch self {
        case .fanout: subscribers
        case .pairs, .fleet: 1
        case .idle, .connect: 0
        }
    }
}

/// The names a bench run gives its identities and donations, unique per run.
public struct BenchNames: Sendable, Codable, Equatable {
    public var runID: String

    public init(runID: String) {
        self.runID = runID
    }

    public func donor(_ index: Int) -> String { "bench-donor-\(index)@bench-\(runID).example" }
    public func volunteer(_ index: Int) -> String { "bench-volunteer-\(index)@bench-\(runID).example" }
    public func donation(_ index: Int) -> String { "bench-\(runID)-\(index)" }
    public func stormIdentity(_ index: Int) -> String { "bench-connect-\(index)@bench-\(runID).example" }
}
