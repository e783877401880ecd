#if canImport(Observation)
import Observation

/// The donor's screen as an `@Observable` model for SwiftUI: ``screen`` follows a ``DonationWatcher``'s events
/// (and the clock, for staleness) on the main actor.
///
/// ```swift
/// @State private var model: DonorScreenModel
/// init(watcher: DonationWatcher) { _model = State(initialValue: DonorScreenModel(watcher: watcher)) }
/// var body: some View { TripMap(screen: model.screen).task { await model.follow() } }
/// ```
///
/// A `@State` is given its first value through its storage in the view's `init`: written at the declaration
/// (`@State private var model = DonorScreenModel(watcher: watcher)`) it does not compile, as a property's initial
/// value cannot read another property. docs/CLIENTS.md has the whole view, compiled by `Tests/ClientImportTests`.
///
/// Cancelling the task that runs ``follow()`` (the view went away) stops only this model: the watcher and its
/// other consumers go on.
@available(iOS 17, macOS 14, *)
@MainActor
@Observable
public final class DonorScreenModel {
    /// What to show now.
    public private(set) var screen: DonorScreen

    @ObservationIgnored private let watcher: DonationWatcher
    @ObservationIgnored private let clockTick: Duration

    /// - Parameter clockTick: how often the screen is recomputed when nothing arrives (the position's age).
    public init(watcher: DonationWatcher, clockTick: Duration = .seconds(1)) {
        self.watcher = watcher
        self.clockTick = clockTick
        screen = watcher.screen()
    }

    /// Follows the watcher until it ends or the calling task is cancelled.
    public func follow() async {
        let clockTick = clockTick
        let ticking = Task { @MainActor [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: clockTick)
                self?.refresh()
            }
        }
        defer { ticking.cancel() }
        // Ends when the watcher does, or when the calling task is cancelled.
        for await _ in watcher { refresh() }
        refresh()
    }

    private func refresh() {
        screen = watcher.screen()
    }
}
#endif
