/// Lays a ``WatchViewModel`` out as the lines of a terminal screen.
///
/// Pure: the same model, size and options always give the same lines, so golden tests can compare them.
/// Three layouts: map beside status (70 columns and more), status above map (40 to 69), and a compact status
/// only below 40 × 12, with a hint to enlarge the terminal.
public struct ScreenRenderer: Sendable {
    /// Below this size there is no map.
    public static let minimumWidth = 40
    public static let minimumHeight = 12
    /// From this width the status panel sits beside the map.
    public static let sideBySideWidth = 70

    public init() {}

    /// The screen's lines: `height` lines (fewer for a degenerate size), each at most `width` visible columns,
    /// without trailing blanks. Only with `options.colour` do they hold ANSI escape sequences.
    public func render(_ model: WatchViewModel, width: Int, height: Int, options: RenderOptions) -> [String] {
        guard width > 0, height > 0 else { return [] }
        var painter = Painter(canvas: Canvas(width: width, height: height), options: options)
        if width < Self.minimumWidth || height < Self.minimumHeight {
            renderCompact(model, on: &painter)
        } else if width >= Self.sideBySideWidth {
            renderSideBySide(model, on: &painter)
        } else {
            renderStacked(model, on: &painter)
        }
        return painter.canvas.lines(colour: options.colour)
    }

    // MARK: Layouts

    private func renderSideBySide(_ model: WatchViewModel, on painter: inout Painter) {
        let width = painter.canvas.width, height = painter.canvas.height
        let statusWidth = width >= 100 ? 40 : 34
        let mapWidth = width - statusWidth - 1
        let eventRows = height >= 20 ? 5 : (height >= 15 ? 4 : 3)
        let bodyRows = height - 3 - eventRows
        header(model, on: &painter)
        painter.rule(row: 1, labels: [(0, "Map"), (mapWidth + 1, "Status")], junction: (mapWidth, "┬"))
        MapPanel(model: model, options: painter.options).draw(on: &painter.canvas, top: 2, left: 0, width: mapWidth, height: bodyRows)
        for row in 2..<(2 + bodyRows) { painter.text("│", row: row, column: mapWidth, width: 1, style: .dim) }
        statusPanel(model, on: &painter, top: 2, left: mapWidth + 2, width: width - mapWidth - 2, rows: bodyRows)
        painter.rule(row: 2 + bodyRows, labels: [(0, "Events")], junction: (mapWidth, "┴"))
        eventPanel(model, on: &painter, top: 3 + bodyRows, rows: eventRows)
    }

    private func renderStacked(_ model: WatchViewModel, on painter: inout Painter) {
        let width = painter.canvas.width, height = painter.canvas.height
        header(model, on: &painter)
        var row = 1
        painter.text(model.headline, row: row, column: 1, width: width - 1, style: .bold, tone: model.headlineTone)
        row += 1
        if let notice = model.notice {
            painter.text(notice, row: row, column: 1, width: width - 1, tone: model.noticeTone)
            row += 1
        }
        for line in compactFacts(model) {
            painter.text(line.text, row: row, column: 1, width: width - 1, tone: line.tone)
            row += 1
        }
        let eventRows = height >= 16 ? 3 : 2
        let mapRows = height - row - 2 - eventRows
        if mapRows >= 3 {
            painter.rule(row: row, labels: [(0, "Map")])
            MapPanel(model: model, options: painter.options).draw(on: &painter.canvas, top: row + 1, left: 0, width: width, height: mapRows)
            row += 1 + mapRows
        }
        painter.rule(row: row, labels: [(0, "Events")])
        eventPanel(model, on: &painter, top: row + 1, rows: height - row - 1)
    }

    private func renderCompact(_ model: WatchViewModel, on painter: inout Painter) {
        let width = painter.canvas.width, height = painter.canvas.height
        var lines: [(text: String, style: Canvas.Style, tone: WatchViewModel.Tone)] = []
        for line in painter.wrap(model.headline, width: width).prefix(2) { lines.append((line, .bold, model.headlineTone)) }
        if let notice = model.notice {
            for line in painter.wrap(notice, width: width).prefix(2) { lines.append((line, .plain, model.noticeTone)) }
        }
        lines.append(("\(model.distance) · \(model.bearing)", .plain, .normal))
        lines.append(("ETA \(model.eta) · \(model.speed)", .plain, .normal))
        lines.append(("Fix \(model.lastFix)", .plain, model.stale ? .warning : .normal))
        lines.append(("Volunteer \(model.volunteerStatus)", .plain, model.volunteerTone))
        if model.connection != "live" { lines.append(("Link: \(model.connection)", .plain, model.connectionTone)) }
        if let last = model.events.last { lines.append(("\(last.time) \(last.text)", .dim, .normal)) }
        lines.append((model.title, .plain, .normal))
        let hint = "Enlarge to \(Self.minimumWidth)x\(Self.minimumHeight) for the map"
        let room = height >= 2 ? height - 1 : height
        for (row, line) in lines.prefix(room).enumerated() {
            painter.text(line.text, row: row, column: 0, width: width, style: line.style, tone: line.tone)
        }
        if height >= 2 { painter.text(hint, row: height - 1, column: 0, width: width, style: .dim) }
    }

    // MARK: Panels

    private func header(_ model: WatchViewModel, on painter: inout Painter) {
        let width = painter.canvas.width
        if painter.options.colour { painter.text(String(repeating: " ", count: width), row: 0, column: 0, width: width, style: .title) }
        let right = painter.fold(model.connection)
        let rightWidth = min(TerminalText.columns(of: right), max(0, width / 2))
        painter.text(model.title, row: 0, column: 1, width: max(0, width - rightWidth - 3), style: .title)
        painter.text(right, row: 0, column: width - rightWidth - 1, width: rightWidth, style: .title)
    }

    private func statusPanel(_ model: WatchViewModel, on painter: inout Painter, top: Int, left: Int, width: Int, rows: Int) {
        var lines: [(text: String, style: Canvas.Style, tone: WatchViewModel.Tone)] = []
        for line in painter.wrap(model.headline, width: width).prefix(2) { lines.append((line, .bold, model.headlineTone)) }
        if let notice = model.notice {
            for line in painter.wrap(notice, width: width).prefix(3) { lines.append((line, .plain, model.noticeTone)) }
        }
        lines.append(("", .plain, .normal))
        let labelWidth = 10
        func fact(_ label: String, _ value: String, tone: WatchViewModel.Tone = .normal, maxLines: Int = 1) {
            let values = painter.wrap(value, width: width - labelWidth).prefix(maxLines)
            for (index, line) in values.enumerated() {
                let prefix = (index == 0 ? label : "") + String(repeating: " ", count: labelWidth - (index == 0 ? label.count : 0))
                lines.append((prefix + line, .plain, tone))
            }
        }
        if model.ended == nil {
            fact("To", model.destination ?? (model.paused ? "\(WatchFormat.unknown) (paused)" : WatchFormat.unknown), maxLines: 2)
        }
        fact("Distance", model.distance)
        fact("Bearing", model.bearing)
        fact("Speed", model.speed)
        fact("ETA", model.eta, tone: model.eta == "arrived" ? .good : .normal)
        fact("Accuracy", model.accuracy)
        fact("Last fix", model.lastFix, tone: model.stale ? .warning : .normal)
        fact("Volunteer", model.volunteerStatus, tone: model.volunteerTone)

        let marker = String(MapPanel.volunteerMarker(heading: model.heading, ascii: painter.options.ascii))
        let dot = painter.options.ascii ? "." : "·"
        let legend = ["H home  I institution  \(dot) trail", "\(marker) volunteer  [ ] destination"]
        if lines.count + 1 + legend.count <= rows {
            while lines.count < rows - legend.count { lines.append(("", .plain, .normal)) }
            for line in legend { lines.append((line, .dim, .normal)) }
        }
        for (index, line) in lines.prefix(rows).enumerated() {
            painter.text(line.text, row: top + index, column: left, width: width, style: line.style, tone: line.tone)
        }
    }

    private func eventPanel(_ model: WatchViewModel, on painter: inout Painter, top: Int, rows: Int) {
        guard rows > 0 else { return }
        let width = painter.canvas.width
        if model.events.isEmpty {
            painter.text("No events yet.", row: top, column: 1, width: width - 1, style: .dim)
            return
        }
        for (index, event) in model.events.suffix(rows).enumerated() {
            let tone: WatchViewModel.Tone =
                switch event.kind {
                case .stale, .connection, .error: .warning
                case .arrival: .good
                case .ended: model.ended?.isDelivered == true ? .good : .warning
                default: .normal
                }
            painter.text(event.time, row: top + index, column: 1, width: 8, style: .dim)
            painter.text(event.text, row: top + index, column: 11, width: width - 11, tone: tone)
        }
    }

    /// The status in two or three short lines, for the narrow layouts.
    private func compactFacts(_ model: WatchViewModel) -> [(text: String, tone: WatchViewModel.Tone)] {
        [
            ("\(model.distance) · \(model.bearing) · ETA \(model.eta) · \(model.speed)", .normal),
            ("Fix \(model.lastFix) · \(model.accuracy) · volunteer \(model.volunteerStatus)", model.stale ? .warning : model.volunteerTone),
        ]
    }
}

/// A canvas with the text rules of a screen: ASCII folding, truncation with an ellipsis, tones as styles.
private struct Painter {
    var canvas: Canvas
    let options: RenderOptions

    func fold(_ text: String) -> String {
        options.ascii ? TerminalText.ascii(text) : text
    }

    func wrap(_ text: String, width: Int) -> [String] {
        TerminalText.wrapped(fold(text), width: width)
    }

    /// Writes `text` at (`row`, `column`), cut to `width` columns with an ellipsis.
    mutating func text(_ text: String, row: Int, column: Int, width: Int, style: Canvas.Style = .plain, tone: WatchViewModel.Tone = .normal) {
        guard width > 0 else { return }
        let toned: Canvas.Style =
            switch tone {
            case .good: .good
            case .warning: .warning
            case .normal: style
            }
        canvas.write(TerminalText.truncated(fold(text), to: width, ascii: options.ascii), row: row, column: column, limit: width, style: toned)
    }

    /// A horizontal rule across the screen with labels at the given columns and an optional junction character.
    mutating func rule(row: Int, labels: [(column: Int, text: String)], junction: (column: Int, character: String)? = nil) {
        let width = canvas.width
        text(String(repeating: "─", count: width), row: row, column: 0, width: width, style: .dim)
        if let junction { text(junction.character, row: row, column: junction.column, width: 1, style: .dim) }
        for label in labels { text(" \(label.text) ", row: row, column: label.column + 1, width: width - label.column - 1, style: .bold) }
    }
}
