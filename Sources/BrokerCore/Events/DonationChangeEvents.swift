import BrokerProtocol

/// The events a durable donation change causes: started, paused, resumed, ended. One definition, used by the
/// broker when it stores a change (the events are written in the change's own transaction).
package enum DonationChangeEvents {
    /// The events of `change`, decided at `now`.
    package static func events(of change: DonationChange, at now: Int64) -> [TrackingEvent] {
        let old = change.old
        let new = change.new
        let incarnation = new?.incarnation ?? old?.incarnation ?? ""
        func event(_ kind: TrackingEvent.Kind) -> TrackingEvent {
            TrackingEvent(
                donation: change.id, incarnation: incarnation, kind: kind, at: now,
                identity: "\(change.id)|\(incarnation)|revision:\(change.revision)")
        }
        // A donation deleted and made again under its id is another donation: the old one ended.
        if let old, let new, old.incarnation != new.incarnation {
            var events: [TrackingEvent] = []
            if !old.state.isTerminal {
                events.append(
                    TrackingEvent(
                        donation: change.id, incarnation: old.incarnation ?? "", kind: .ended(.deleted), at: now,
                        identity: "\(change.id)|\(old.incarnation ?? "")|revision:\(change.revision)"))
            }
            return events + Self.events(of: DonationChange(id: change.id, revision: change.revision, old: nil, new: new), at: now)
        }
        guard let new else {
            return old.map { $0.state.isTerminal ? [] : [event(.ended(.deleted))] } ?? []
        }
        let oldState = old?.state
        if new.state.isTerminal {
            guard oldState?.isTerminal != true else { return [] }
            return [event(.ended(new.state == .delivered ? .delivered : .cancelled))]
        }
        let wasTrackable = oldState?.isTrackable ?? false
        if let destination = new.state.destination, !wasTrackable {
            return [event(oldState?.isPaused == true ? .resumed(destination) : .started(destination))]
        }
        if wasTrackable && !new.state.isTrackable {
            return [event(.paused(new.state))]
        }
        // The volunteer changed while trackable: the new volunteer's trip starts.
        if wasTrackable, let destination = new.state.destination, old?.volunteer != new.volunteer {
            return [event(.started(destination))]
        }
        return []
    }
}
