import BrokerClient
import BrokerProtocol
import Foundation
import Logging
import WatchRendering

/// Runs a ``DonationWatcher`` (the library does the connecting, reconnecting, catching up and the donor's screen
/// state) and feeds what it yields to the ``WatchState`` and the display, letting time pass on the screen between
/// events.
///
/// Runs in one task and owns its state; the watcher runs in a task of its own.
final class WatchSession {
    /// How often time passes on the screen (the age of the fix, the reconnect countdown).
    static let tickInterval: Duration = .milliseconds(250)

    /// What the session's loop takes in, in order.
    private enum Input: Sendable {
        case event(DonationEvent)
        case tick
        case finished(DonationWatcher.End)
    }

    private let watcher: DonationWatcher
    private let display: any WatchDisplay
    private var state: WatchState

    init(url: String, token: String, target: ClientFrame.Target, display: any WatchDisplay, logger: Logger) {
        var options = DonationWatcher.Options()
        // A wrong address or token is reported at once; once watching, every failure is retried.
        options.policy.attemptsBeforeFirstConnection = 1
        watcher = DonationWatcher(url: url, target: target, options: options, logger: logger) { token }
        self.display = display
        state = WatchState(request: target)
    }

    /// Watches until the tracking ends or cannot go on, and returns why.
    func run() async -> WatchEnd {
        display.start()
        apply(.connecting)
        let (inputs, feed) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .bufferingNewest(1024))
        let watcher = watcher
        let running = Task {
            // One run per session's watcher: a second one cannot happen here.
            let end = (try? await watcher.run()) ?? .stopped
            feed.yield(.finished(end))
        }
        let forwarding = Task {
            for await event in watcher { feed.yield(.event(event)) }
        }
        let interval = Self.tickInterval
        let ticking = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                feed.yield(.tick)
            }
        }
        var end: WatchEnd?
        for await input in inputs {
            switch input {
            case .tick:
                tick(now: Self.now())
            case .event(let event):
                take(event)
            case .finished(let reason):
                // Every event was yielded before `run()` returned: take the ones still queued first.
                await forwarding.value
                end = reason
                feed.finish()
            }
        }
        ticking.cancel()
        running.cancel()
        return finish(state.ended ?? end ?? .stopped)
    }

    // MARK: Events to the screen

    /// The watcher's events go to the state as they are: the library already turned the frames into events and
    /// keeps the donor's screen state (``DonorScreen``); the state adds the terminal's log.
    private func take(_ event: DonationEvent) {
        let now = Self.now()
        show(state.apply(event, now: now), now: now)
    }

    // MARK: Helpers

    private func apply(_ event: LinkEvent) {
        let now = Self.now()
        show(state.apply(event, now: now), now: now)
    }

    private func show(_ update: WatchUpdate, now: Int64) {
        display.show(state, update: update, now: now)
    }

    private func tick(now: Int64) {
        let update = state.tick(now: now)
        if update.isEmpty {
            display.tick(state, now: now)
        } else {
            display.show(state, update: update, now: now)
        }
    }

    private func finish(_ end: WatchEnd) -> WatchEnd {
        let now = Self.now()
        if state.ended == nil {
            let update = state.apply(DonationEvent.ended(end), now: now)
            display.show(state, update: update, now: now)
        }
        display.finish(state, now: now)
        return state.ended ?? end
    }

    /// The wall clock in milliseconds since the Unix epoch.
    static func now() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
