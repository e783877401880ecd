extension WatchState {
    /// Takes into account what happened to the connection: lost, retrying, subscribing again, ended.
    @discardableResult
    public mutating func apply(_ event: LinkEvent, now: Int64) -> WatchUpdate {
        var update = WatchUpdate()
        guard ended == nil else { return update }
        switch event {
        case .connecting:
            connection = .connecting
        case .lost(let reason):
            connection = .connecting
            let reason = TerminalText.sanitized(reason)
            record(
                WatchLogEntry(at: now, kind: .connection, fields: [.init("reason", reason)], text: "Connection lost: \(reason); reconnecting"),
                into: &update)
        case .retrying(let attempt, let at, let reason):
            let reason = TerminalText.sanitized(reason)
            connection = .retrying(attempt: attempt, at: at, reason: reason)
            // Reported to plain mode, but kept out of the event log: the header shows the countdown.
            let delay = WatchFormat.seconds(at - now)
            update.entries.append(
                WatchLogEntry(
                    at: now, kind: .retry, fields: [.init("attempt", String(attempt)), .init("in", delay), .init("reason", reason)],
                    text: "Reconnecting in \(delay) (try \(attempt))"))
        case .resubscribing(let since):
            connection = .subscribing
            resubscribeSince = since
            let text =
                since.map { "Reconnected; asking for the positions missed since seq \($0)" }
                ?? "Reconnected; subscribing again"
            record(
                WatchLogEntry(at: now, kind: .reconnect, fields: [.init("since", since.map(String.init) ?? "none")], text: text),
                into: &update)
        case .notTrackable(let message, let retryAt):
            let first: Bool
            if case .waitingToResubscribe = connection { first = false } else { first = true }
            connection = .waitingToResubscribe(at: retryAt)
            if let state = screen.state, screen.tracking { screen.apply(.paused(state), now: now) }
            if first {
                record(
                    WatchLogEntry(
                        at: now, kind: .pause, fields: [.init("tracking", "false")],
                        text: "Tracking paused: \(TerminalText.sanitized(message)); asking again regularly"),
                    into: &update)
            }
        case .ended(let end):
            self.end(end, now: now, into: &update)
        }
        return update
    }
}
