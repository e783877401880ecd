import FleetSimulation
import Foundation
import NIOConcurrencyHelpers

/// Standard output for the fleet: whole lines, and on a terminal a status line rewritten in place.
final class Console: Sendable {
    let isTerminal: Bool
    private let showingStatus = NIOLockedValueBox(false)

    init(plain: Bool) {
        isTerminal = !plain && isatty(STDOUT_FILENO) == 1
    }

    /// The terminal's width in columns (100 when unknown).
    var width: Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 100 }
        return Int(size.ws_col)
    }

    func line(_ text: String) {
        showingStatus.withLockedValue { showing in
            write((showing ? "\r\u{1B}[K" : "") + text + "\n")
            showing = false
        }
    }

    func status(_ text: String) {
        guard isTerminal else { return line(text) }
        let shown = ProgressLine().inPlace(text, width: width)
        showingStatus.withLockedValue { showing in
            write(shown)
            showing = true
        }
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    var fleetOutput: FleetOutput {
        FleetOutput(line: { self.line($0) }, status: { self.status($0) }, isLive: isTerminal)
    }
}
