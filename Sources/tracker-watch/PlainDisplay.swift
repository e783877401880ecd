import WatchRendering

/// Plain mode: one line per event on standard output, for logs and scripts.
final class PlainDisplay: WatchDisplay {
    private let terminal: Terminal
    private let formatter: PlainFormatter

    init(terminal: Terminal, formatter: PlainFormatter) {
        self.terminal = terminal
        self.formatter = formatter
    }

    func start() {}

    func show(_ state: WatchState, update: WatchUpdate, now: Int64) {
        let lines = formatter.lines(for: update, state: state, now: now)
        guard !lines.isEmpty else { return }
        terminal.output(lines.map { $0 + "\n" }.joined())
    }

    func tick(_ state: WatchState, now: Int64) {}

    func finish(_ state: WatchState, now: Int64) {
        // The `ended` line is already on standard output; errors also go to standard error, which a log file
        // redirect does not swallow.
        guard let end = state.ended, end.exitCode > 1 else { return }
        let summary = TerminalText.sanitized(end.summary(institution: nil))
        terminal.diagnostic("tracker-watch: " + (formatter.ascii ? TerminalText.ascii(summary) : summary) + "\n")
    }
}
