/// Which server a bench run measures: the broker, or the baseline that every broker figure is divided by.
public enum BenchServer: String, Codable, Sendable, CaseIterable {
    /// location-broker, through its public wire contract: tokens, donations, `subscribe`, `publish`.
    case broker
    /// `Benchmarks/BaselineServer`: a bare SwiftNIO WebSocket fan-out with no JSON, no auth and no gating. A
    /// connection's channel is the last segment of its URL path, and each text frame goes to the channel's other
    /// connections as it came (docs/BENCHMARKS.md, "Baseline").
    case baseline

    /// The path a baseline connection upgrades on, under ``LoadClient/Target/path``: its channel, named as the
    /// broker names it (the volunteer's identity), so that frames are the same size.
    public static func baselinePath(_ base: String, channel: String) -> String {
        (base.hasSuffix("/") ? base : base + "/") + channel
    }

    /// The baseline's path prefix when `--broker` names none.
    public static let baselineBasePath = "/ws"
}
