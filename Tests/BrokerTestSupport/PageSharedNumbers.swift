import BrokerProtocol
import Foundation
import TrackingRules

/// The numbers the tracking page shares with tracker-watch and the apps (``DonorViewRules``), as the page's script
/// names them, and a reader of its `const NAME = value;` lines: for the page's files alone (TrackingPageTests) and
/// the script a live broker serves (TrackingPageConstantsTests).
enum PageSharedNumbers {
    /// The shared numbers the script must declare, as the page's names and in the page's units.
    static let expected: [String: Double] = [
        "STALE_AFTER_MS": Double(DonorViewRules.staleAfterMilliseconds),
        "TRAIL_LIMIT": Double(DonorViewRules.trailLimit),
        "SUBSCRIBE_TIMEOUT_MS": Double(DonorViewRules.subscribeTimeoutMilliseconds),
        "NOT_TRACKABLE_RETRY_MS": Double(DonorViewRules.notTrackableRetryMilliseconds),
        "BACKOFF_INITIAL_S": Double(DonorViewRules.backoffInitialMilliseconds) / 1000,
        "BACKOFF_CAP_S": Double(DonorViewRules.backoffCapMilliseconds) / 1000,
        "BACKOFF_PATIENCE_S": Double(DonorViewRules.backoffPatienceMilliseconds) / 1000,
        "EARTH_RADIUS": Geodesy.earthRadius,
        "SPEED_WEIGHT": DonorViewRules.speedWeight,
        "MIN_MOVING_SPEED": DonorViewRules.minimumMovingSpeed,
        "MAX_PLAUSIBLE_SPEED": DonorViewRules.maximumPlausibleSpeed,
        "MIN_SAMPLE_GAP_MS": Double(DonorViewRules.minimumSampleGapMilliseconds),
        "MAX_SAMPLE_GAP_MS": Double(DonorViewRules.maximumSampleGapMilliseconds),
        "MIN_COURSE_DISTANCE": DonorViewRules.minimumCourseDistance,
    ]

    /// `const NAME = value;` declarations in `script`, by name (every one, to see duplicates).
    static func declarations(in script: String) -> [String: [Double]] {
        var found: [String: [Double]] = [:]
        for line in script.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count == 4, words[0] == "const", words[2] == "=", words[3].hasSuffix(";"),
                let value = Double(words[3].dropLast())
            else { continue }
            found[String(words[1]), default: []].append(value)
        }
        return found
    }
}
