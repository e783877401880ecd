import Atomics
import BrokerProtocol
import Foundation
import NIOConcurrencyHelpers

/// What every task of a fleet run shares: settings, the backend client, the token minter, the ledger, the
/// counters, the output and the stop signal.
final class FleetContext: Sendable {
    let configuration: FleetConfiguration
    let backend: BackendClient
    let minter: TokenMinter
    let ledger = DonationLedger()
    let stats = FleetStats()
    let output: FleetOutput
    let tokenTTL: Int64
    private let stopping = ManagedAtomic<Bool>(false)
    private let rateLimitTold = ManagedAtomic<Bool>(false)

    init(configuration: FleetConfiguration, backend: BackendClient, minter: TokenMinter, output: FleetOutput) {
        self.configuration = configuration
        self.backend = backend
        self.minter = minter
        self.output = output
        self.tokenTTL = Int64(configuration.duration) + 3600
    }

    /// Whether the run is winding down (duration over, or Ctrl-C).
    var isStopping: Bool { stopping.load(ordering: .relaxed) }

    func stop() { stopping.store(true, ordering: .relaxed) }

    /// What each volunteer is doing, for a run that does not wind down: the fleet names who is stuck where.
    private let doing = NIOLockedValueBox<[Int: String]>([:])

    /// Notes what volunteer `index` is doing now; `nil` when it has finished.
    func note(_ index: Int, _ activity: String?) { doing.withLockedValue { $0[index] = activity } }

    /// The volunteers still at work, with what they are doing.
    var stillDoing: [(index: Int, activity: String)] {
        doing.withLockedValue { $0.sorted { $0.key < $1.key }.map { (index: $0.key, activity: $0.value) } }
    }

    /// Milliseconds since the epoch, as a phone stamps its fixes.
    static func wallClock() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// Counts an error and tells the person once why publishes are refused.
    func rateLimited(_ message: String) {
        stats.update { $0.rateLimited += 1 }
        if !rateLimitTold.exchange(true, ordering: .relaxed) {
            let settings = configuration.brokerRateSettings
            output.line(
                "ERROR: the broker rate-limits the volunteers (\(message)). They publish every \(Self.seconds(configuration.realInterval)) "
                    + "(\(Self.seconds(configuration.interval)) / speedup \(configuration.speedup)). Restart the broker with "
                    + "LOCATION_BROKER_PUBLISH_RATE=\(settings.rate) LOCATION_BROKER_PUBLISH_BURST=\(settings.burst), or lower --speedup.")
        }
    }

    static func seconds(_ value: Double) -> String {
        value >= 1 ? String(format: "%.3g s", value) : String(format: "%.0f ms", value * 1000)
    }

    /// Sleeps `seconds` of real time, waking early when the run stops.
    func sleep(_ seconds: Double) async {
        var left = seconds
        while left > 0 && !isStopping && !Task.isCancelled {
            let chunk = min(left, 0.25)
            try? await Task.sleep(for: .milliseconds(Int64(chunk * 1000)))
            left -= chunk
        }
    }
}

/// Where a fleet run writes: whole lines, and a live status line on a terminal.
public struct FleetOutput: Sendable {
    /// Prints a line that stays.
    public var line: @Sendable (String) -> Void
    /// Shows the live status (a terminal overwrites it in place; plain output prints it).
    public var status: @Sendable (String) -> Void
    /// Whether `status` rewrites one line in place, so it can be shown often.
    public var isLive: Bool

    public init(line: @escaping @Sendable (String) -> Void, status: @escaping @Sendable (String) -> Void, isLive: Bool) {
        self.line = line
        self.status = status
        self.isLive = isLive
    }
}
