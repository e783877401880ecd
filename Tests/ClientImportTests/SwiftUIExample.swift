import BrokerClient

#if canImport(SwiftUI)
import SwiftUI
#endif

// The SwiftUI example of docs/CLIENTS.md, word for word between the two markers (`SwiftUIExampleTests` compares
// them). This target imports BrokerClient alone, not @testable: every name the example takes from the library is
// checked against its public API by the compiler. The SwiftUI names come from SwiftUIStandIns.swift on Linux.

// docs/CLIENTS.md example begins
/// The donor's trip screen. It runs the watcher while it is shown and follows it through an `@Observable` model.
@available(iOS 17, macOS 14, *)
struct TripView: View {
    @State private var watcher: DonationWatcher
    @State private var model: DonorScreenModel

    init(watcher: DonationWatcher) {
        // `@State private var model = DonorScreenModel(watcher: watcher)` does not compile (a property's initial
        // value cannot read another one): a `@State` is given its first value through its storage, here.
        _watcher = State(initialValue: watcher)
        _model = State(initialValue: DonorScreenModel(watcher: watcher))
    }

    var body: some View {
        VStack(alignment: .leading, spacing: 8) {
            Text(TripWords.headline(model.screen))
            if let distance = model.screen.distance, let eta = model.screen.eta {
                Text("\(Int(distance)) m away, about \(Int(eta / 60) + 1) min")
            }
            if case .reconnecting(_, _, let reason) = model.screen.link {
                Text("Reconnecting: \(reason)")
            }
        }
        .task { _ = try? await watcher.run() }  // one run per watcher: it ends when the view goes away
        .task { await model.follow() }
    }
}

/// The volunteer's status line: who can see the fixes, and what became of the newest one.
@available(iOS 17, macOS 14, *)
struct VolunteerStatusView: View {
    @State private var status: PublisherStatusModel

    init(publisher: VolunteerPublisher) {
        _status = State(initialValue: PublisherStatusModel(publisher: publisher))
    }

    var body: some View {
        VStack {
            Text(status.audience?.isWatched == true ? "A donor is following you" : "Nobody is following you")
            if let outcome = status.lastOutcome {
                Text(TripWords.answer(outcome.result))
            }
        }
        .task { await status.follow() }
    }
}

/// Hands a fix over (from Core Location: `Position(location)`) and waits for the broker's answer to it.
func share(_ fix: Position, with publisher: VolunteerPublisher) async -> String {
    guard let outcome = await publisher.publish(fix).outcome else { return "No longer waiting" }
    return TripWords.answer(outcome.result)
}

enum TripWords {
    static func headline(_ screen: DonorScreen) -> String {
        switch screen.phase {
        case .connecting: "Connecting…"
        case .waiting: "Waiting for the volunteer's location…"
        case .live: "On the way"
        case .stale: "No new location for a while"
        case .paused: "Tracking paused: the volunteer has your donation"
        case .offline: "The volunteer's phone is offline"
        case .arrived: screen.destination == .home ? "The volunteer is at your door" : "Arrived at the institution"
        case .ended: screen.ended == .unsubscribed(.delivered) ? "Delivered. Thank you!" : "Tracking ended"
        }
    }

    static func answer(_ result: VolunteerPublisher.FixOutcome.Result) -> String {
        switch result {
        case .accepted(_, let audience): audience.isWatched ? "Seen by the donor" : "Sent"
        case .refused(let code, _): "Refused: \(code.rawValue)"
        case .superseded: "Replaced by a newer fix"
        case .dropped(let reason): "Not sent: \(reason)"
        }
    }
}
// docs/CLIENTS.md example ends
