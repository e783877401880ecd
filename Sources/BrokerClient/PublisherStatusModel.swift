#if canImport(Observation)
import Observation

/// A volunteer's link and audience as an `@Observable` model for SwiftUI: follows a ``VolunteerPublisher``'s
/// events on the main actor.
///
/// ```swift
/// @State private var status: PublisherStatusModel
/// init(publisher: VolunteerPublisher) { _status = State(initialValue: PublisherStatusModel(publisher: publisher)) }
/// var body: some View { StatusBar(link: status.link, watched: status.audience?.isWatched).task { await status.follow() } }
/// ```
///
/// As for ``DonorScreenModel``: the `@State` gets its first value in `init`, through its storage.
///
/// Cancelling the task that runs ``follow()`` stops only this model: the publisher and its other consumers go on.
@available(iOS 17, macOS 14, *)
@MainActor
@Observable
public final class PublisherStatusModel {
    /// Where the link to the broker stands.
    public private(set) var link: LinkState
    /// Who sees the fixes, from the newest `ack`.
    public private(set) var audience: VolunteerPublisher.Audience?
    /// What became of the newest fix settled (accepted, refused, superseded, dropped).
    public private(set) var lastOutcome: VolunteerPublisher.FixOutcome?

    @ObservationIgnored private let publisher: VolunteerPublisher

    public init(publisher: VolunteerPublisher) {
        self.publisher = publisher
        link = publisher.link
        audience = publisher.audience
    }

    /// Follows the publisher until it stops or the calling task is cancelled.
    public func follow() async {
        // Subscribed first, then the state read: what happened before is in the state, what happens after in the
        // stream, and nothing falls between them.
        let events = publisher.events
        link = publisher.link
        audience = publisher.audience
        lastOutcome = publisher.lastOutcome ?? lastOutcome
        for await event in events {
            link = publisher.link
            audience = publisher.audience
            if case .fix(let outcome) = event { lastOutcome = outcome }
        }
    }
}
#endif
