import BrokerProtocol

/// The numbers every donor's view of a trip must agree on, written once: tracker-watch (WatchRendering), the client
/// library (BrokerClient's `ConnectionStateMachine`, `DonationWatcher`, `DonationTracker`) and the tracking page,
/// whose script the broker hands them to (`TrackingPage.constants` declares them before the page's own files).
///
/// A donor who looks at the page and at the terminal watcher side by side sees the same staleness, the same
/// speed and ETA, and a page that comes back after a broker restart by the same rules as the apps. Each side is
/// tested to read these: WatchTests and ClientTests for the Swift views, Tests/TrackingPageTests (the page's files
/// under node) and Tests/BrokerTests (the script a live broker serves) for the page.
/// The speed average and the ETA are computed by one implementation, ``SpeedSmoother``, beside these numbers.
public enum DonorViewRules {
    /// A fix older than this (60 s) is marked stale, and the donor is told once.
    public static let staleAfterMilliseconds: Int64 = 60_000
    /// How many recent positions are drawn as the trail.
    public static let trailLimit = 50

    // MARK: Speed and ETA

    /// How much a new speed sample counts in the moving average: 0.3 forgets a stop after about five fixes.
    public static let speedWeight = 0.3
    /// Below this (0.5 m/s, 1.8 km/h) the volunteer is taken as standing still and no ETA is given.
    public static let minimumMovingSpeed = 0.5
    /// Above this (70 m/s, 252 km/h) a speed sample is taken as a GPS jump and ignored.
    public static let maximumPlausibleSpeed = 70.0
    /// Fixes closer in time than this (1 s) give no speed sample: the division would magnify the GPS noise.
    public static let minimumSampleGapMilliseconds: Int64 = 1_000
    /// Fixes further apart than this (10 min) say nothing about the current speed.
    public static let maximumSampleGapMilliseconds: Int64 = 600_000
    /// Without a reported heading, the course is the bearing from the previous fix when they are this far apart
    /// (5 m) or more; closer, the bearing is noise.
    public static let minimumCourseDistance = 5.0
    /// The Earth's radius the views measure distances with (``Geodesy/earthRadius``).
    public static let earthRadius = Geodesy.earthRadius

    // MARK: Reconnecting

    /// The largest delay before the first retry: full jitter draws below it, doubling per failure.
    public static let backoffInitialMilliseconds: Int64 = 500
    /// The longest delay between two attempts.
    public static let backoffCapMilliseconds: Int64 = 15_000
    /// The least delay after too many connections (4029, HTTP 429) or too many refused frames (4009).
    public static let backoffPatienceMilliseconds: Int64 = 5_000
    /// How long an answer to `subscribe` may take before the connection is given up and made again.
    public static let subscribeTimeoutMilliseconds: Int64 = 10_000
    /// How often a donation that is not trackable now (paused, not started) is asked about again.
    public static let notTrackableRetryMilliseconds: Int64 = 15_000
}
