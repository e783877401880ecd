import WatchRendering

/// Where the watcher shows what it knows: the full-screen view or plain lines.
///
/// Called from the session's one task only.
protocol WatchDisplay: AnyObject {
    /// Called once, before anything is shown.
    func start()
    /// Something changed: `update` says what the reducer added.
    func show(_ state: WatchState, update: WatchUpdate, now: Int64)
    /// Time passed without news (about four times a second); the age of the fix may need a redraw.
    func tick(_ state: WatchState, now: Int64)
    /// Watching ended (`state.ended` is set): show the end and give the terminal back.
    func finish(_ state: WatchState, now: Int64)
}
