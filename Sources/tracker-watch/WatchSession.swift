import BrokerClient
import BrokerProtocol
import Foundation
import Logging
import WatchRendering

/// Runs a ``DonationWatcher`` (the library does the connecting, reconnecting and catching up) and feeds what it
/// yields to the ``WatchState`` and the display, letting time pass on the screen between events.
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
    /// What the watcher said of the donation, kept up to date: its frames are rebuilt from it for the reducer.
    private var facts: DonationFacts?

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

    // MARK: Events to the reducer

    private func take(_ event: DonationEvent) {
        let now = Self.now()
        switch event {
        case .connection(.connected):
            break
        case .connection(.offline):
            apply(.lost(reason: "this device has no network"))
        case .connection(.reconnecting(let delay, let attempt, let reason)):
            if case .live = state.connection { apply(.lost(reason: reason)) }
            apply(.retrying(attempt: attempt, at: now + Self.milliseconds(delay), reason: reason))
        case .connection(.reconnected(let since)):
            apply(.resubscribing(since: since))
            if let facts { show(state.apply(.subscribed(Self.subscribed(facts)), now: now), now: now) }
        case .subscribed(let new):
            facts = new
            show(state.apply(.subscribed(Self.subscribed(new)), now: now), now: now)
        case .waitingForFirstPosition, .stale, .fresh:
            // The state tells these itself from the fix's age.
            break
        case .position(let seq, let position):
            guard let facts else { return }
            show(state.apply(.position(.init(channel: facts.channel, seq: seq, position: position)), now: now), now: now)
        case .paused(let newState), .resumed(let newState, _), .state(let newState, _, _):
            guard var facts else { return }
            facts.state = newState
            switch event {
            case .paused: (facts.tracking, facts.destination) = (false, nil)
            case .resumed(_, let destination): (facts.tracking, facts.destination) = (true, destination)
            case .state(_, let tracking, let destination): (facts.tracking, facts.destination) = (tracking, destination)
            default: break
            }
            self.facts = facts
            var change = ServerFrame.StateChange(channel: facts.channel, donation: facts.donation, state: newState)
            change.tracking = facts.tracking
            change.destination = facts.destination
            show(state.apply(.state(change), now: now), now: now)
        case .presence(let online, let lastSeen):
            guard let facts else { return }
            show(state.apply(.presence(.init(channel: facts.channel, online: online, lastSeen: lastSeen)), now: now), now: now)
        case .arrival(let place, let distance):
            guard let facts else { return }
            show(state.apply(.arrival(.init(channel: facts.channel, donation: facts.donation, place: place, distance: distance)), now: now), now: now)
        case .ended(let end):
            if case .unsubscribed(let reason) = end, let facts {
                show(state.apply(.unsubscribed(.init(re: nil, channel: facts.channel, donation: facts.donation, reason: reason)), now: now), now: now)
            } else {
                apply(.ended(end))
            }
        }
    }

    /// The `subscribed` frame the reducer expects, rebuilt from the facts (positions come as their own events).
    private static func subscribed(_ facts: DonationFacts) -> ServerFrame.Subscribed {
        ServerFrame.Subscribed(
            re: nil, channel: facts.channel, donation: facts.donation, state: facts.state, tracking: facts.tracking,
            destination: facts.destination, home: facts.home, institution: facts.institution, last: nil, online: facts.online)
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
            let update = state.apply(.ended(end), now: now)
            display.show(state, update: update, now: now)
        }
        display.finish(state, now: now)
        return state.ended ?? end
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// The wall clock in milliseconds since the Unix epoch.
    static func now() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
