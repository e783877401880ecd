import BrokerClient
import BrokerProtocol

extension WatchState {
    /// Takes one frame from the broker into account.
    ///
    /// Frames of other channels or donations are ignored, and so is everything once watching has ended.
    /// Positions with a seq at or below ``highestSeq`` were seen before (a backlog after a reconnect) and are dropped.
    /// - Returns: the log entries added and the new fix, for displays that print as things happen.
    @discardableResult
    public mutating func apply(_ frame: ServerFrame, now: Int64) -> WatchUpdate {
        var update = WatchUpdate()
        guard ended == nil else { return update }
        switch frame {
        case .welcome(let welcome):
            identity = welcome.identity
            connection = .subscribing
        case .ack:
            break
        case .subscribed(let subscribed):
            applySubscribed(subscribed, now: now, into: &update)
        case .position(let frame):
            guard isOurs(channel: frame.channel) else { break }
            take(seq: frame.seq, position: frame.position, now: now, into: &update)
        case .state(let change):
            guard isOurs(channel: change.channel, donation: change.donation) else { break }
            applyState(change.state, tracking: change.tracking, destination: change.destination, now: now, into: &update)
        case .arrival(let arrival):
            guard isOurs(channel: arrival.channel, donation: arrival.donation) else { break }
            applyArrival(arrival, now: now, into: &update)
        case .presence(let presence):
            guard isOurs(channel: presence.channel) else { break }
            applyPresence(online: presence.online, lastSeen: presence.lastSeen, now: now, into: &update)
        case .unsubscribed(let unsubscribed):
            guard isOurs(channel: unsubscribed.channel, donation: unsubscribed.donation) else { break }
            switch unsubscribed.reason {
            case .delivered: donationState = .delivered
            case .cancelled: donationState = .cancelled
            default: break
            }
            end(.unsubscribed(unsubscribed.reason), now: now, into: &update)
        case .error(let error):
            record(
                WatchLogEntry(
                    at: now, kind: .error, fields: [.init("code", error.code.rawValue)],
                    text: "The broker answered: \(TerminalText.sanitized(error.message))"),
                into: &update)
        }
        return update
    }

    private func isOurs(channel frameChannel: String, donation frameDonation: String? = nil) -> Bool {
        if let channel, frameChannel != channel { return false }
        if let donation, let frameDonation, frameDonation != donation { return false }
        return true
    }

    private mutating func applySubscribed(_ subscribed: ServerFrame.Subscribed, now: Int64, into update: inout WatchUpdate) {
        let first = subscriptions == 0
        let previousState = donationState, wasTracking = tracking, wasOnline = online
        subscriptions += 1
        channel = subscribed.channel
        donation = subscribed.donation
        home = subscribed.home
        institution = subscribed.institution
        connection = .live
        let words = DonationWords.status(subscribed.state, tracking: subscribed.tracking, arrived: nil)
        var fields: [WatchLogEntry.Field] = [
            .init("donation", TerminalText.sanitized(subscribed.donation)), .init("channel", TerminalText.sanitized(subscribed.channel)),
            .init("state", subscribed.state.rawValue), .init("destination", subscribed.destination?.rawValue ?? "none"),
            .init("online", subscribed.online.map(String.init) ?? "unknown"),
        ]
        if first {
            donationState = subscribed.state
            tracking = subscribed.tracking
            destination = subscribed.destination
            online = subscribed.online
            record(WatchLogEntry(at: now, kind: .subscribed, fields: fields, text: "Watching donation \(TerminalText.sanitized(subscribed.donation)): \(words)"), into: &update)
        } else {
            if let highestSeq { fields.append(.init("since", String(highestSeq))) }
            record(WatchLogEntry(at: now, kind: .resubscribed, fields: fields, text: "Subscribed again: \(words)"), into: &update)
            if previousState != subscribed.state || wasTracking != subscribed.tracking {
                applyState(subscribed.state, tracking: subscribed.tracking, destination: subscribed.destination, now: now, into: &update)
            }
            // While paused the broker does not tell presence (`online` null).
            if let newOnline = subscribed.online, wasOnline != newOnline {
                applyPresence(online: newOnline, lastSeen: nil, now: now, into: &update)
            }
        }
        // After `since`, the backlog that follows ends with `last`: taking it now would drop the older ones.
        let since = resubscribeSince
        resubscribeSince = nil
        if let last = subscribed.last, since.map({ last.seq <= $0 }) ?? true {
            take(seq: last.seq, position: last.position, now: now, into: &update)
        }
    }

    /// Takes a position as the new fix unless its seq was seen before.
    private mutating func take(seq: Int64, position: Position, now: Int64, into update: inout WatchUpdate) {
        if let highestSeq, seq <= highestSeq { return }
        highestSeq = seq
        let sample = SpeedSmoother.sample(from: fix?.position, to: position)
        if let sample { speed.add(sample) }
        if staleAnnounced, let old = fix {
            let gap = WatchFormat.age((position.timestamp - old.position.timestamp) / 1000)
            record(WatchLogEntry(at: now, kind: .fresh, fields: [.init("gap", gap)], text: "Location updates again (after \(gap))"), into: &update)
        }
        staleAnnounced = false
        fix = Fix(seq: seq, position: position, receivedAt: now, speed: sample)
        trail.append(position)
        if trail.count > Self.trailLimit { trail.removeFirst(trail.count - Self.trailLimit) }
        update.position = seq
    }

    private mutating func applyState(
        _ newState: DonationState, tracking newTracking: Bool, destination newDestination: Destination?, now: Int64,
        into update: inout WatchUpdate
    ) {
        let wasTracking = tracking
        donationState = newState
        tracking = newTracking
        if newDestination != destination { arrived = nil }
        destination = newDestination
        let words = DonationWords.status(newState, tracking: newTracking, arrived: arrived)
        let fields: [WatchLogEntry.Field] = [
            .init("state", newState.rawValue), .init("tracking", String(newTracking)),
            .init("destination", newDestination?.rawValue ?? "none"),
        ]
        if wasTracking && !newTracking {
            let reason = words.hasSuffix(" (paused)") ? String(words.dropLast(" (paused)".count)) : words
            record(WatchLogEntry(at: now, kind: .pause, fields: fields, text: "Tracking paused: \(reason)"), into: &update)
        } else if !wasTracking && newTracking {
            record(WatchLogEntry(at: now, kind: .resume, fields: fields, text: "Tracking resumed: \(words)"), into: &update)
        } else {
            record(WatchLogEntry(at: now, kind: .state, fields: fields, text: words), into: &update)
        }
    }

    private mutating func applyArrival(_ arrival: ServerFrame.Arrival, now: Int64, into update: inout WatchUpdate) {
        if arrival.place == destination { arrived = arrival.place }
        let place = DonationWords.placeInSentence(arrival.place, institution: institution)
        let distance = WatchFormat.distance(arrival.distance)
        record(
            WatchLogEntry(
                at: now, kind: .arrival, fields: [.init("place", arrival.place.rawValue), .init("distance", distance)],
                text: "The volunteer has arrived at \(place) (\(distance) away)"),
            into: &update)
    }

    private mutating func applyPresence(online newOnline: Bool, lastSeen newLastSeen: Int64?, now: Int64, into update: inout WatchUpdate) {
        let changed = online != newOnline
        online = newOnline
        if let newLastSeen { lastSeen = newLastSeen }
        guard changed else { return }
        var fields: [WatchLogEntry.Field] = [.init("online", String(newOnline))]
        if let lastSeen { fields.append(.init("lastSeen", WatchFormat.iso8601(lastSeen))) }
        let text = newOnline ? "The volunteer is online" : "The volunteer went offline"
        record(WatchLogEntry(at: now, kind: .presence, fields: fields, text: text), into: &update)
    }

    mutating func end(_ end: WatchEnd, now: Int64, into update: inout WatchUpdate) {
        ended = end
        connection = .closed
        tracking = false
        destination = nil
        let institutionName = institution?.name.map(TerminalText.sanitized).flatMap { $0.isEmpty ? nil : $0 }
        record(
            WatchLogEntry(at: now, kind: .ended, fields: [.init("reason", end.reason)], text: TerminalText.sanitized(end.summary(institution: institutionName))),
            into: &update)
    }
}
