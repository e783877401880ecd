import BrokerProtocol
import TrackingRules

extension TrackingPage {
    /// The numbers the page shares with tracker-watch and BrokerClient, by the names the page's script uses, from
    /// ``DonorViewRules`` (written once, there). The page's files declare none of them: PageSharedNumbersTests
    /// (Tests/TrackingPageTests) checks that they do not and that the page behaves by these under node.
    static let sharedNumbers: [(name: String, value: Double)] = [
        ("STALE_AFTER_MS", Double(DonorViewRules.staleAfterMilliseconds)),
        ("TRAIL_LIMIT", Double(DonorViewRules.trailLimit)),
        ("SUBSCRIBE_TIMEOUT_MS", Double(DonorViewRules.subscribeTimeoutMilliseconds)),
        ("NOT_TRACKABLE_RETRY_MS", Double(DonorViewRules.notTrackableRetryMilliseconds)),
        ("BACKOFF_INITIAL_S", Double(DonorViewRules.backoffInitialMilliseconds) / 1000),
        ("BACKOFF_CAP_S", Double(DonorViewRules.backoffCapMilliseconds) / 1000),
        ("BACKOFF_PATIENCE_S", Double(DonorViewRules.backoffPatienceMilliseconds) / 1000),
        ("EARTH_RADIUS", DonorViewRules.earthRadius),
        ("SPEED_WEIGHT", DonorViewRules.speedWeight),
        ("MIN_MOVING_SPEED", DonorViewRules.minimumMovingSpeed),
        ("MAX_PLAUSIBLE_SPEED", DonorViewRules.maximumPlausibleSpeed),
        ("MIN_SAMPLE_GAP_MS", Double(DonorViewRules.minimumSampleGapMilliseconds)),
        ("MAX_SAMPLE_GAP_MS", Double(DonorViewRules.maximumSampleGapMilliseconds)),
        ("MIN_COURSE_DISTANCE", DonorViewRules.minimumCourseDistance),
    ]

    /// ``sharedNumbers`` as the script's first declarations (`const STALE_AFTER_MS = 60000;`).
    static let constants = declarations(sharedNumbers)

    /// `numbers` as JavaScript constants, after a line that says where they come from.
    static func declarations(_ numbers: [(name: String, value: Double)]) -> String {
        "// Written by the broker from TrackingRules' DonorViewRules: the numbers tracker-watch and the apps use.\n"
            + numbers.map { "const \($0.name) = \(javaScriptNumber($0.value));\n" }.joined()
    }

    /// `value` as a JavaScript number literal: `15`, not `15.0`.
    static func javaScriptNumber(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
