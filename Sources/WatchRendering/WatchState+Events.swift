import BrokerClient
import BrokerProtocol
import TrackingRules

extension WatchState {
    /// Takes one event of the ``DonationWatcher`` into account: the library's screen state follows it, and the
    /// terminal logs it.
    ///
    /// Everything is ignored once watching has ended.
    /// - Returns: the log entries added and the new fix, for displays that print as things happen.
    @discardableResult
    public mutating func apply(_ event: DonationEvent, now: Int64) -> WatchUpdate {
        var update = WatchUpdate()
        guard ended == nil else { return update }
        let before = screen
        screen.apply(event, now: now)
        switch event {
        case .connection(let change):
            applyConnection(change, now: now, into: &update)
        case .subscribed(let facts):
            subscriptions += 1
            connection = .live
            let words = DonationWords.status(facts.state, tracking: facts.tracking, arrived: nil)
            let fields: [WatchLogEntry.Field] = [
                .init("donation", TerminalText.sanitized(facts.donation)), .init("channel", TerminalText.sanitized(facts.channel)),
                .init("state", facts.state.rawValue), .init("destination", facts.destination?.rawValue ?? "none"),
                .init("online", facts.online.map(String.init) ?? "unknown"),
            ]
            record(
                WatchLogEntry(at: now, kind: .subscribed, fields: fields, text: "Watching donation \(TerminalText.sanitized(facts.donation)): \(words)"),
                into: &update)
        case .position(let seq, let position):
            take(seq: seq, position: position, now: now, into: &update)
        case .paused(let state):
            logStateChange(state, wasTracking: before.tracking, now: now, into: &update)
        case .resumed(let state, _), .state(let state, _, _):
            logStateChange(state, wasTracking: before.tracking, now: now, into: &update)
        case .presence(let online, _):
            guard before.volunteerOnline != online else { break }
            var fields: [WatchLogEntry.Field] = [.init("online", String(online))]
            if let lastSeen { fields.append(.init("lastSeen", WatchFormat.iso8601(lastSeen))) }
            record(
                WatchLogEntry(at: now, kind: .presence, fields: fields, text: online ? "The volunteer is online" : "The volunteer went offline"),
                into: &update)
        case .arrival(let place, let distance):
            let words = DonationWords.placeInSentence(place, institution: institution)
            let metres = WatchFormat.distance(distance)
            record(
                WatchLogEntry(
                    at: now, kind: .arrival, fields: [.init("place", place.rawValue), .init("distance", metres)],
                    text: "The volunteer has arrived at \(words) (\(metres) away)"),
                into: &update)
        case .stale(let lastFix):
            staleAnnounced = true
            let age = WatchFormat.age((now - lastFix) / 1000)
            record(
                WatchLogEntry(at: now, kind: .stale, fields: [.init("age", age)], text: "No new location for \(age): the position shown is STALE"),
                into: &update)
        case .fresh:
            freshPending = true
        case .waitingForFirstPosition:
            break
        case .ended(let end):
            self.end(end, now: now, into: &update)
        }
        return update
    }

    /// Frames, for tools and tests that read them rather than a watcher's events: the library's
    /// ``DonationTracker`` turns them into events, as inside ``DonationWatcher``.
    @discardableResult
    public mutating func apply(_ frame: ServerFrame, now: Int64) -> WatchUpdate {
        guard ended == nil else { return WatchUpdate() }
        switch frame {
        case .welcome:
            connection = .subscribing
            return WatchUpdate()
        case .ack:
            return WatchUpdate()
        case .error(let error):
            var update = WatchUpdate()
            record(
                WatchLogEntry(
                    at: now, kind: .error, fields: [.init("code", error.code.rawValue)],
                    text: "The broker answered: \(TerminalText.sanitized(error.message))"),
                into: &update)
            return update
        case .subscribed(let subscribed):
            let since = resubscribeSince
            resubscribeSince = nil
            var update = WatchUpdate()
            if subscriptions > 0 {
                subscriptions += 1
                connection = .live
                var fields: [WatchLogEntry.Field] = [
                    .init("state", subscribed.state.rawValue), .init("destination", subscribed.destination?.rawValue ?? "none"),
                ]
                if let since { fields.append(.init("since", String(since))) }
                let words = DonationWords.status(subscribed.state, tracking: subscribed.tracking, arrived: nil)
                record(WatchLogEntry(at: now, kind: .resubscribed, fields: fields, text: "Subscribed again: \(words)"), into: &update)
            }
            return apply(tracker.subscribed(subscribed, since: since), now: now, into: update)
        default:
            return apply(tracker.apply(frame), now: now, into: WatchUpdate())
        }
    }

    /// Lets time pass: the library announces once when the fix of frames read here became stale. (A watcher
    /// announces it among its own events.)
    @discardableResult
    public mutating func tick(now: Int64) -> WatchUpdate {
        apply(tracker.tick(now: now), now: now, into: WatchUpdate())
    }

    private mutating func apply(_ events: [DonationEvent], now: Int64, into update: WatchUpdate) -> WatchUpdate {
        var update = update
        for event in events {
            let more = apply(event, now: now)
            update.entries += more.entries
            if let seq = more.position { update.position = seq }
        }
        return update
    }

    private mutating func applyConnection(_ change: ConnectionChange, now: Int64, into update: inout WatchUpdate) {
        switch change {
        case .connected:
            connection = .live
        case .reconnected(let since):
            connection = .live
            let text = since.map { "Reconnected; asked for the positions missed since seq \($0)" } ?? "Reconnected; subscribed again"
            record(WatchLogEntry(at: now, kind: .reconnect, fields: [.init("since", since.map(String.init) ?? "none")], text: text), into: &update)
        case .reconnecting(let delay, let attempt, let reason):
            if case .live = connection { update.entries += apply(LinkEvent.lost(reason: reason), now: now).entries }
            update.entries += apply(LinkEvent.retrying(attempt: attempt, at: now + delay.wholeMilliseconds, reason: reason), now: now).entries
        case .offline:
            connection = .noNetwork
            record(
                WatchLogEntry(at: now, kind: .connection, fields: [.init("reason", "no network")], text: "This device has no network; waiting for it"),
                into: &update)
        }
    }

    /// Takes a position as the new fix (the library already dropped seqs seen before).
    private mutating func take(seq: Int64, position: Position, now: Int64, into update: inout WatchUpdate) {
        if freshPending, let old = fix {
            let gap = WatchFormat.age((position.timestamp - old.position.timestamp) / 1000)
            record(WatchLogEntry(at: now, kind: .fresh, fields: [.init("gap", gap)], text: "Location updates again (after \(gap))"), into: &update)
        }
        freshPending = false
        staleAnnounced = false
        highestSeq = seq
        fix = Fix(seq: seq, position: position, receivedAt: now, speed: SpeedSmoother.sample(from: fix?.position, to: position))
        update.position = seq
    }

    private mutating func logStateChange(_ newState: DonationState, wasTracking: Bool, now: Int64, into update: inout WatchUpdate) {
        let words = DonationWords.status(newState, tracking: tracking, arrived: arrived)
        let fields: [WatchLogEntry.Field] = [
            .init("state", newState.rawValue), .init("tracking", String(tracking)), .init("destination", destination?.rawValue ?? "none"),
        ]
        if wasTracking && !tracking {
            let reason = words.hasSuffix(" (paused)") ? String(words.dropLast(" (paused)".count)) : words
            record(WatchLogEntry(at: now, kind: .pause, fields: fields, text: "Tracking paused: \(reason)"), into: &update)
        } else if !wasTracking && tracking {
            record(WatchLogEntry(at: now, kind: .resume, fields: fields, text: "Tracking resumed: \(words)"), into: &update)
        } else {
            record(WatchLogEntry(at: now, kind: .state, fields: fields, text: words), into: &update)
        }
    }

    mutating func end(_ end: WatchEnd, now: Int64, into update: inout WatchUpdate) {
        if screen.ended == nil { screen.apply(.ended(end), now: now) }
        ended = end
        connection = .closed
        let institutionName = institution?.name.map(TerminalText.sanitized).flatMap { $0.isEmpty ? nil : $0 }
        record(
            WatchLogEntry(at: now, kind: .ended, fields: [.init("reason", end.reason)], text: TerminalText.sanitized(end.summary(institution: institutionName))),
            into: &update)
    }
}

extension Duration {
    /// Whole milliseconds.
    var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
