import BrokerCore
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// When the key set is read again. The defaults are documented in docs/CONFIGURATION.md (`jwks_url`); tests
/// shorten them.
package struct JWKSTiming: Sendable {
    /// How often the refresher wakes to see whether a refresh is due (and, for a file, whether it changed).
    package var tick: Duration = .seconds(1)
    /// The shortest time a fetched set is cached, whatever its `Cache-Control` says (`no-cache` included).
    package var minimumMaxAge: Duration = .seconds(60)
    /// The longest time a fetched set is cached, whatever its `Cache-Control` says.
    package var maximumMaxAge: Duration = .seconds(6 * 3600)
    /// How long a set without `Cache-Control: max-age` is cached.
    package var defaultMaxAge: Duration = .seconds(300)
    /// At most one fetch per this interval because a token named an unknown `kid`: a flood of made-up `kid`s
    /// cannot make the broker hammer the identity provider.
    package var unknownKeyInterval: Duration = .seconds(30)
    /// After a failed refresh, the next try comes this much later (the last good set stays in force meanwhile).
    package var retryInterval: Duration = .seconds(30)
    /// The longest a fetch may take.
    package var fetchTimeout: Duration = .seconds(10)

    /// How long a set fetched with `maxAge` is kept before the background refresh: 80 % of its cache time, so
    /// that it is refreshed before it expires.
    func refreshDelay(maxAge: Duration?) -> Duration {
        let cached = min(max(maxAge ?? defaultMaxAge, minimumMaxAge), maximumMaxAge)
        return cached / 5 * 4
    }
}

/// Keeps the JWKS in force fresh: a URL is fetched again before its `Cache-Control: max-age` runs out, a file
/// when its modification time or size changes or on SIGHUP, and either at once (rate-limited) when a token names
/// a `kid` the set does not hold. A failed refresh keeps the last good set, is logged and counted.
package struct JWKSRefresher: Service {
    let source: JWKSSource
    package let ring: KeyRing
    let timing: JWKSTiming
    /// Told of every reading of the key set: whether it succeeded, and how many keys are in force after it.
    let onRefresh: @Sendable (_ succeeded: Bool, _ keys: Int) -> Void
    let logger: Logger
    /// The reading made at start: its `max-age` or file version set when the first refresh is due.
    private let first: JWKSSource.Reading

    /// Reads the key set once, so that a broker whose keys cannot be read refuses to start; the background
    /// refresh starts only when the service runs.
    package static func load(
        source: JWKSSource, timing: JWKSTiming, onRefresh: @escaping @Sendable (_ succeeded: Bool, _ keys: Int) -> Void, logger: Logger
    ) async throws -> JWKSRefresher {
        let reading = try await source.read(timeout: timing.fetchTimeout)
        let keys = try await VerificationKeys.read(reading.data, source: source.description, logger: logger)
        onRefresh(true, keys.keys.count)
        logger.info("JWKS loaded", metadata: ["source": "\(source)", "keys": "\(keys.keys.keys.sorted().joined(separator: ","))"])
        return JWKSRefresher(source: source, ring: KeyRing(keys), timing: timing, onRefresh: onRefresh, logger: logger, first: reading)
    }

    private init(
        source: JWKSSource, ring: KeyRing, timing: JWKSTiming, onRefresh: @escaping @Sendable (Bool, Int) -> Void, logger: Logger,
        first: JWKSSource.Reading
    ) {
        self.source = source
        self.ring = ring
        self.timing = timing
        self.onRefresh = onRefresh
        self.logger = logger
        self.first = first
    }

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            var failure: (any Error)?
            await withChildTasks { add, cancelAll in
                add { [ring, timing] in
                    while !Task.isCancelled {
                        guard (try? await Task.sleep(for: timing.tick)) != nil else { return }
                        ring.wake()
                    }
                }
                let hangUps = HangUps()
                if case .file = source {
                    add { [ring] in
                        for await _ in await UnixSignalsSequence(trapping: .sighup) {
                            hangUps.record()
                            ring.wake()
                        }
                    }
                }
                do { try await refreshLoop(hangUps: hangUps) } catch { failure = error }
                cancelAll()
            }
            if let failure { throw failure }
        }
    }

    /// Whether SIGHUP came since the refresher last looked.
    private final class HangUps: Sendable {
        private let seen = LockedValue(false)
        func record() { seen.withLock { $0 = true } }
        func take() -> Bool {
            seen.withLock { seen in
                defer { seen = false }
                return seen
            }
        }
    }

    private func refreshLoop(hangUps: HangUps) async throws {
        let clock = ContinuousClock()
        var lastAttempt = clock.now
        // A file is read again as soon as it changes; a URL when its cache time is running out.
        var due = source.isFile ? clock.now : clock.now + timing.refreshDelay(maxAge: first.maxAge)
        var fileVersion = first.fileVersion
        for await _ in ring.wakeUps {
            try Task.checkCancellation()
            let now = clock.now
            var reason: String?
            // A report waits for the interval to pass; the timer's next wake-up looks again.
            if now - lastAttempt >= timing.unknownKeyInterval, ring.takeUnknownKeyReport() {
                reason = "a token named an unknown kid"
            } else if hangUps.take() {
                reason = "SIGHUP"
            } else if case .file(let path) = source {
                if JWKSSource.FileVersion(path: path) != fileVersion, now >= due { reason = "the file changed" }
            } else if now >= due {
                reason = "its cache time is running out"
            }
            guard let reason else { continue }
            lastAttempt = now
            let attempted: JWKSSource.FileVersion? = if case .file(let path) = source { JWKSSource.FileVersion(path: path) } else { nil }
            switch await refresh(reason: reason) {
            case .success(let reading):
                fileVersion = reading.fileVersion
                due = source.isFile ? clock.now : clock.now + timing.refreshDelay(maxAge: reading.maxAge)
            case .failure:
                // A broken file is not read again until it changes again; a URL is tried again later.
                fileVersion = attempted
                due = source.isFile ? clock.now : clock.now + timing.retryInterval
            }
        }
    }

    /// Reads the set again and puts it in force; on failure the set in force stays, and the failure is logged
    /// and counted.
    private func refresh(reason: String) async -> Result<JWKSSource.Reading, any Error> {
        do {
            let reading = try await source.read(timeout: timing.fetchTimeout)
            let keys = try await VerificationKeys.read(reading.data, source: source.description, logger: logger)
            ring.replace(with: keys)
            onRefresh(true, keys.keys.count)
            logger.info(
                "JWKS refreshed",
                metadata: ["source": "\(source)", "reason": "\(reason)", "keys": "\(keys.keys.keys.sorted().joined(separator: ","))"])
            return .success(reading)
        } catch {
            onRefresh(false, ring.keys.keys.count)
            logger.warning(
                "JWKS refresh failed; the last good key set stays in force",
                metadata: ["source": "\(source)", "reason": "\(reason)", "error": "\(error)"])
            return .failure(error)
        }
    }
}

extension JWKSSource {
    var isFile: Bool {
        if case .file = self { return true }
        return false
    }
}

extension JWKSTiming {
    /// The timings the broker uses unless its settings say otherwise.
    package static let defaults = JWKSTiming()
}
