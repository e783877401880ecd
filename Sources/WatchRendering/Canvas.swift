/// A grid of styled character cells that becomes the lines of a screen.
struct Canvas {
    /// How a cell is drawn when colour is on; with colour off every style looks the same.
    enum Style: Sendable, Equatable {
        case plain, bold, dim, title, home, institution, volunteer, trail, destination, good, warning

        /// The SGR parameters of the style.
        var sgr: String {
            switch self {
            case .plain: "0"
            case .bold: "1"
            case .dim: "2"
            case .title: "1;7"
            case .home: "1;36"
            case .institution: "1;35"
            case .volunteer: "1;33"
            case .trail: "33"
            case .destination: "1;32"
            case .good: "1;32"
            case .warning: "1;31"
            }
        }
    }

    struct Cell: Equatable {
        var character: Character = " "
        var style: Style = .plain
        /// The right half of a wide character drawn in the cell before.
        var isContinuation = false
    }

    let width: Int
    let height: Int
    private var cells: [[Cell]]

    init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: Array(repeating: Cell(), count: self.width), count: self.height)
    }

    /// Draws one single-column character; anything outside the grid is dropped.
    mutating func put(_ character: Character, row: Int, column: Int, style: Style = .plain) {
        guard row >= 0, row < height, column >= 0, column < width else { return }
        cells[row][column] = Cell(character: character, style: style)
    }

    /// Writes text from `column`, within `limit` columns (default: to the right edge); returns the columns used.
    @discardableResult
    mutating func write(_ text: String, row: Int, column: Int, limit: Int? = nil, style: Style = .plain) -> Int {
        guard row >= 0, row < height, column >= 0, column < width else { return 0 }
        let end = min(width, column + (limit ?? width))
        var position = column
        for character in text {
            let span = TerminalText.columns(of: character)
            guard span > 0 else { continue }
            guard position + span <= end else { break }
            cells[row][position] = Cell(character: character, style: style)
            if span == 2 { cells[row][position + 1] = Cell(character: " ", style: style, isContinuation: true) }
            position += span
        }
        return position - column
    }

    /// Whether a cell holds nothing but a blank.
    func isBlank(row: Int, column: Int) -> Bool {
        guard row >= 0, row < height, column >= 0, column < width else { return false }
        return cells[row][column].character == " " && !cells[row][column].isContinuation
    }

    /// The lines of the grid, without trailing blanks; with `colour`, styles become ANSI SGR sequences.
    func lines(colour: Bool) -> [String] {
        cells.map { row in
            var end = row.count
            while end > 0, row[end - 1].character == " ", !row[end - 1].isContinuation, !colour || row[end - 1].style == .plain {
                end -= 1
            }
            var line = ""
            var current = Style.plain
            for cell in row[..<end] where !cell.isContinuation {
                if colour && cell.style != current {
                    line += "\u{1B}[0m"
                    if cell.style != .plain { line += "\u{1B}[\(cell.style.sgr)m" }
                    current = cell.style
                }
                line.append(cell.character)
            }
            if colour && current != .plain { line += "\u{1B}[0m" }
            return line
        }
    }
}
