import Foundation
import WatchRendering

/// The full-screen view on the alternate screen: redrawn on every update, once a second, and on resize.
final class FullScreenDisplay: WatchDisplay {
    private let terminal: Terminal
    private let options: RenderOptions
    private let renderer = ScreenRenderer()
    /// What is on the screen now, to rewrite only the lines that changed.
    private var shownLines: [String] = []
    private var shownWidth = 0
    private var shownHeight = 0
    private var shownSecond: Int64 = -1

    init(terminal: Terminal, options: RenderOptions) {
        self.terminal = terminal
        self.options = options
    }

    func start() {
        terminal.enterFullScreen()
    }

    func show(_ state: WatchState, update: WatchUpdate, now: Int64) {
        draw(state, now: now, force: true)
    }

    func tick(_ state: WatchState, now: Int64) {
        draw(state, now: now, force: false)
    }

    func finish(_ state: WatchState, now: Int64) {
        draw(state, now: now, force: true)
        terminal.restore()
        // The alternate screen is gone: leave the last events and the outcome on the normal screen.
        let model = WatchViewModel(state: state, now: now, utcOffsetSeconds: Self.utcOffset(at: now))
        var text = ""
        // The outcome follows on its own line, so the log's `ended` entry is not repeated.
        for event in model.events.suffix(7) where event.kind != .ended { text += fold("\(event.time)  \(event.text)") + "\n" }
        terminal.output(text)
        if let end = state.ended, let notice = model.notice {
            let line = fold("tracker-watch: \(notice)") + "\n"
            if end.exitCode <= 1 { terminal.output(line) } else { terminal.diagnostic(line) }
        }
    }

    private func fold(_ text: String) -> String {
        options.ascii ? TerminalText.ascii(text) : text
    }

    private func draw(_ state: WatchState, now: Int64, force: Bool) {
        let (width, height) = terminal.size()
        let second = now / 1000
        let resized = width != shownWidth || height != shownHeight
        guard force || resized || second != shownSecond else { return }
        let model = WatchViewModel(state: state, now: now, utcOffsetSeconds: Self.utcOffset(at: now))
        let lines = renderer.render(model, width: width, height: height, options: options)
        var output = resized ? "\u{1B}[0m\u{1B}[2J" : ""
        for row in 0..<height {
            let line = row < lines.count ? lines[row] : ""
            if !resized, row < shownLines.count, shownLines[row] == line { continue }
            output += "\u{1B}[\(row + 1);1H" + line + "\u{1B}[0m\u{1B}[K"
        }
        terminal.draw(output)
        shownLines = lines
        shownWidth = width
        shownHeight = height
        shownSecond = second
    }

    /// The local time zone's offset from UTC at `now`, for the times of the event log.
    private static func utcOffset(at now: Int64) -> Int {
        TimeZone.current.secondsFromGMT(for: Date(timeIntervalSince1970: Double(now) / 1000))
    }
}
