import BrokerProtocol
import TrackingRules

/// Decides the events a volunteer's fixes and silences cause: first position, approaching, arrived, silent
/// and back. Runs under the channel's shard lock, on this node's view of the trip; each event carries an
/// identity (or, for silences, the alternation the outbox checks) so that a node that restarts, or two nodes
/// that both see the fix, still tell the backend once.
struct TripEventDetector: Sendable {
    let rules: TrackingEventRules
    /// Within this of the destination a fix is an arrival, not an approach.
    let arrivalRadiusMeters: Double

    /// After `position` was kept for `donations`, at `now`.
    func fixKept(_ position: Position, in channel: VolunteerChannel, for donations: [String], now: Int64) {
        let trip = Self.trip(of: channel)
        // The ETA follows the speed the views show: the same smoothing, one sample per kept fix.
        if let sample = SpeedSmoother.sample(from: trip.previousFix, to: position) { trip.speed.add(sample) }
        trip.previousFix = position
        for id in donations {
            guard let gate = channel.donations[id], let destination = gate.state.destination else { continue }
            var progress = trip.progress[id] ?? TripProgress()
            if progress.silent {
                progress.silent = false
                record(.back(destination), of: gate, at: now, identity: nil, channel: channel.name)
            }
            if !progress.sawFirstPosition {
                progress.sawFirstPosition = true
                record(.firstPosition(destination), of: gate, at: now, identity: Self.identity(gate, destination, "first_position"))
            }
            if !progress.approached, gate.arrival == nil, let target = gate.destinationCoordinates {
                let distance = Geodesy.distance(fromLat: position.lat, lon: position.lon, toLat: target.lat, lon: target.lon)
                if distance > arrivalRadiusMeters, let eta = trip.speed.eta(distance: distance), eta <= rules.approachingSeconds {
                    progress.approached = true
                    record(
                        .approaching(destination, etaMinutes: Self.minutes(eta), distanceMeters: Self.roundedTo100(distance)),
                        of: gate, at: now, identity: Self.identity(gate, destination, "approaching"))
                }
            }
            progress.lastFixAt = now
            trip.progress[id] = progress
        }
    }

    /// A kept fix came within the arrival radius of `gate`'s destination. An arrival also ends the leg's
    /// chance of an `approaching`.
    func arrived(_ gate: DonationGate, in channel: VolunteerChannel, now: Int64) {
        guard let destination = gate.state.destination else { return }
        Self.trip(of: channel).progress[gate.id, default: TripProgress()].approached = true
        record(.arrived(destination), of: gate, at: now, identity: Self.identity(gate, destination, "arrived"))
    }

    /// Judges silence on every trackable donation of `channel`: no fix for the configured time since the later
    /// of the window's opening and the last fix this node kept.
    func sweep(_ channel: VolunteerChannel, now: Int64) {
        guard !channel.donations.isEmpty else { return }
        let trip = Self.trip(of: channel)
        for (id, gate) in channel.donations {
            guard let since = gate.trackableSince, let destination = gate.state.destination else { continue }
            var progress = trip.progress[id] ?? TripProgress()
            guard !progress.silent else { continue }
            let quietSince = max(progress.lastFixAt ?? since, since)
            guard now - quietSince >= rules.silentAfterMilliseconds else { continue }
            progress.silent = true
            trip.progress[id] = progress
            record(.silent(destination, seconds: Int((now - quietSince) / 1000)), of: gate, at: now, identity: nil, channel: channel.name)
        }
    }

    /// The channel's trip state, made on first use.
    private static func trip(of channel: VolunteerChannel) -> TripState {
        if let trip = channel.trip { return trip }
        let made = TripState()
        channel.trip = made
        return made
    }

    /// A new leg of `donation` (another destination), or the donation no longer gated here: what the events
    /// told of the last leg is forgotten, but a silence still unanswered stays, so the next fix says `back`.
    static func forgetLeg(of donation: String, in channel: VolunteerChannel, ended: Bool) {
        guard let trip = channel.trip else { return }
        if !ended, trip.progress[donation]?.silent == true {
            trip.progress[donation] = TripProgress(silent: true)
        } else {
            trip.progress.removeValue(forKey: donation)
        }
    }

    private func record(_ kind: TrackingEvent.Kind, of gate: DonationGate, at now: Int64, identity: String?, channel: String? = nil) {
        rules.sink.record(
            TrackingEvent(donation: gate.id, incarnation: gate.incarnation ?? "", kind: kind, at: now, identity: identity, channel: channel))
    }

    /// Told once per destination of a donation's incarnation.
    private static func identity(_ gate: DonationGate, _ destination: Destination, _ what: String) -> String {
        "\(gate.id)|\(gate.incarnation ?? "")|\(destination.rawValue)|\(what)"
    }

    /// Whole minutes, rounded up: "4 minutes away" is never said of 4 min 30 s.
    static func minutes(_ seconds: Double) -> Int { max(1, Int((seconds / 60).rounded(.up))) }

    /// The distance rounded to 100 m: enough for "1.2 km away", too coarse to place anyone.
    static func roundedTo100(_ metres: Double) -> Int { Int((metres / 100).rounded()) * 100 }
}
