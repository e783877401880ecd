import BrokerProtocol

/// Draws the map: trail, home, institution, the volunteer's arrow, the destination in brackets, north and a scale bar.
struct MapPanel {
    /// Arrows for the eight compass points, clockwise from north.
    static let arrows: [Character] = ["↑", "↗", "→", "↘", "↓", "↙", "←", "↖"]
    static let asciiArrows: [Character] = ["^", "/", ">", "\\", "v", "/", "<", "\\"]

    /// The marker of the volunteer: an arrow along `heading`, or a dot when the heading is unknown.
    static func volunteerMarker(heading: Double?, ascii: Bool) -> Character {
        guard let heading else { return ascii ? "@" : "●" }
        let index = WatchFormat.compassIndex(heading)
        return ascii ? asciiArrows[index] : arrows[index]
    }

    let model: WatchViewModel
    let options: RenderOptions

    /// Draws into the rectangle whose top-left cell is (`top`, `left`).
    func draw(on canvas: inout Canvas, top: Int, left: Int, width: Int, height: Int) {
        guard width >= 6, height >= 3 else { return }
        var points: [WatchViewModel.Point] = []
        if let home = model.home { points.append(home) }
        if let institution = model.institution { points.append(institution) }
        points += model.trail
        if let volunteer = model.volunteer { points.append(volunteer) }
        guard let projection = MapProjection.fit(points, columns: width, rows: height) else {
            let text = "No map yet"
            canvas.write(text, row: top + height / 2, column: left + max(0, (width - text.count) / 2), limit: width, style: .dim)
            return
        }
        func place(_ point: WatchViewModel.Point) -> (row: Int, column: Int)? {
            let cell = projection.cell(lat: point.lat, lon: point.lon)
            guard projection.contains(column: cell.column, row: cell.row) else { return nil }
            return (top + cell.row, left + cell.column)
        }

        let trailDot: Character = options.ascii ? "." : "·"
        for point in model.trail.dropLast() {
            if let at = place(point) { canvas.put(trailDot, row: at.row, column: at.column, style: .trail) }
        }
        drawPlace(model.home, marker: "H", style: .home, isTarget: model.target == .home, on: &canvas, place: place)
        drawPlace(model.institution, marker: "I", style: .institution, isTarget: model.target == .institution, on: &canvas, place: place)
        if let volunteer = model.volunteer, let at = place(volunteer) {
            let style: Canvas.Style = model.stale ? .warning : .volunteer
            canvas.put(Self.volunteerMarker(heading: model.heading, ascii: options.ascii), row: at.row, column: at.column, style: style)
        }

        // North in the top-right corner; the projection keeps the edge rows free of points.
        let north = options.ascii ? "N^" : "N↑"
        canvas.write(north, row: top, column: left + width - 1 - north.count, style: .bold)
        let bar = projection.scaleBar(maxColumns: max(2, min(16, width / 3)))
        let ends: (Character, Character, Character) = options.ascii ? ("|", "-", "|") : ("├", "─", "┤")
        let barText = String(ends.0) + String(repeating: String(ends.1), count: max(0, bar.columns - 1)) + String(ends.2)
        let row = top + height - 1
        let used = canvas.write(barText, row: row, column: left + 1, limit: width - 1, style: .dim)
        canvas.write(" " + bar.label, row: row, column: left + 1 + used, limit: width - 1 - used, style: .dim)
    }

    private func drawPlace(
        _ point: WatchViewModel.Point?, marker: Character, style: Canvas.Style, isTarget: Bool, on canvas: inout Canvas,
        place: (WatchViewModel.Point) -> (row: Int, column: Int)?
    ) {
        guard let point, let at = place(point) else { return }
        if isTarget {
            canvas.put("[", row: at.row, column: at.column - 1, style: .destination)
            canvas.put("]", row: at.row, column: at.column + 1, style: .destination)
        }
        canvas.put(marker, row: at.row, column: at.column, style: isTarget ? .destination : style)
    }
}
