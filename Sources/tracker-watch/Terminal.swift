#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers

/// The terminal the watcher draws on: its size, the alternate screen, and output a signal handler can share.
///
/// Every write goes through one lock, so the Ctrl-C handler never restores the terminal in the middle of a frame,
/// and once restored, screen drawing stops.
final class Terminal: Sendable {
    private struct State {
        var fullScreen = false
        /// The input settings before echo was turned off; restored on exit.
        var savedInput: termios?
    }

    private let state = NIOLockedValueBox(State())

    /// Whether standard output is a terminal (isatty(1)).
    static var outputIsTerminal: Bool { isatty(STDOUT_FILENO) != 0 }

    /// The size in columns and rows, from TIOCGWINSZ; else COLUMNS and LINES; else 80 × 24.
    func size() -> (width: Int, height: Int) {
        var size = winsize()
        let result = withUnsafeMutablePointer(to: &size) { ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), $0) }
        if result == 0, size.ws_col > 0, size.ws_row > 0 { return (Int(size.ws_col), Int(size.ws_row)) }
        let columns = getenv("COLUMNS").flatMap { Int(String(cString: $0)) } ?? 80
        let lines = getenv("LINES").flatMap { Int(String(cString: $0)) } ?? 24
        return (max(1, columns), max(1, lines))
    }

    /// Switches to the alternate screen with the cursor hidden, and stops typed keys from echoing over the view.
    /// Ctrl-C still sends SIGINT: only echo and line editing are turned off.
    func enterFullScreen() {
        state.withLockedValue { state in
            if isatty(STDIN_FILENO) != 0 {
                var attributes = termios()
                if tcgetattr(STDIN_FILENO, &attributes) == 0 {
                    state.savedInput = attributes
                    attributes.c_lflag &= ~tcflag_t(ECHO | ICANON)
                    _ = tcsetattr(STDIN_FILENO, TCSANOW, &attributes)
                }
            }
            Self.writeAll(STDOUT_FILENO, "\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
            state.fullScreen = true
        }
    }

    /// Draws screen output; ignored unless in full-screen mode, so nothing is drawn after ``restore()``.
    func draw(_ text: String) {
        state.withLockedValue { state in
            guard state.fullScreen else { return }
            Self.writeAll(STDOUT_FILENO, text)
        }
    }

    /// Leaves the alternate screen, shows the cursor and restores input settings. Safe to call more than once.
    func restore() {
        state.withLockedValue { state in
            if state.fullScreen {
                Self.writeAll(STDOUT_FILENO, "\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
                state.fullScreen = false
            }
            if var saved = state.savedInput {
                _ = tcsetattr(STDIN_FILENO, TCSANOW, &saved)
                state.savedInput = nil
            }
        }
    }

    /// Writes text to standard output.
    func output(_ text: String) {
        state.withLockedValue { _ in Self.writeAll(STDOUT_FILENO, text) }
    }

    /// Writes text to standard error.
    func diagnostic(_ text: String) {
        state.withLockedValue { _ in Self.writeAll(STDERR_FILENO, text) }
    }

    /// Writes all of `text`, retrying after interruptions and short writes.
    static func writeAll(_ descriptor: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return write(descriptor, base + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            if written == 0 { return }
            offset += written
        }
    }
}
